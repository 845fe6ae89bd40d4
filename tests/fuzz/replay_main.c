/* Regression driver: runs a fuzz target over every file of the given
 * files or directories (the committed seed corpus and past findings). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_target.h"

#define REPLAY_MAX_INPUT (4u << 20)

static int replay_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    perror(path);
    return -1;
  }
  uint8_t *buf = malloc(REPLAY_MAX_INPUT);
  size_t len = buf ? fread(buf, 1, REPLAY_MAX_INPUT, f) : 0;
  fclose(f);
  if (buf == NULL)
    return -1;
  /* exact-size copy so ASan sees any read past the input */
  uint8_t *exact = malloc(len ? len : 1);
  memcpy(exact, buf, len);
  free(buf);
  LLVMFuzzerTestOneInput(exact, len);
  free(exact);
  return 0;
}

static int replay_path(const char *path, int *count) {
  struct stat st;
  if (stat(path, &st) != 0) {
    perror(path);
    return -1;
  }
  if (!S_ISDIR(st.st_mode)) {
    (*count)++;
    return replay_file(path);
  }
  DIR *dir = opendir(path);
  if (dir == NULL) {
    perror(path);
    return -1;
  }
  int rc = 0;
  struct dirent *entry;
  while (rc == 0 && (entry = readdir(dir)) != NULL) {
    if (entry->d_name[0] == '.')
      continue;
    char child[4096];
    snprintf(child, sizeof(child), "%s/%s", path, entry->d_name);
    rc = replay_path(child, count);
  }
  closedir(dir);
  return rc;
}

int main(int argc, char **argv) {
  int count = 0;
  for (int i = 1; i < argc; i++)
    if (replay_path(argv[i], &count) != 0)
      return 1;
  if (count == 0) {
    fprintf(stderr, "no inputs replayed\n");
    return 1;
  }
  printf("replayed %d inputs\n", count);
  return 0;
}
