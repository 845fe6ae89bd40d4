/* The relay's files against what a live session delivered
 * (relay_check.h). */
#include "read/relay_check.h"

#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read/bt_source.h"

/* HOSTNAME and SESSION of net://HOST[:PORT]/host/HOSTNAME/SESSION, into
 * host and session; -1 when the URL is not of that form. */
static int url_names(const char *url, char *host, size_t host_len, char *session,
                     size_t session_len) {
  const char *p = strncmp(url, "net://", 6) == 0 ? strchr(url + 6, '/') : NULL;
  if (p == NULL || strncmp(p, "/host/", 6) != 0)
    return -1;
  const char *h = p + 6, *slash = strchr(h, '/');
  if (slash == NULL || slash == h || slash[1] == '\0' || strchr(slash + 1, '/') != NULL ||
      (size_t)(slash - h) >= host_len || strlen(slash + 1) >= session_len)
    return -1;
  snprintf(host, host_len, "%.*s", (int)(slash - h), h);
  snprintf(session, session_len, "%s", slash + 1);
  return strcmp(host, "..") == 0 || strcmp(host, ".") == 0 ? -1 : 0;
}

/* name is SESSION-YYYYMMDD-HHMMSS, as lttng-relayd names a session's
 * directory. */
static bool is_session_dir(const char *name, const char *session) {
  size_t n = strlen(session);
  if (strncmp(name, session, n) != 0 || strlen(name) != n + 16)
    return false;
  const char *d = name + n;
  for (int i = 0; i < 16; i++)
    if ((i == 0 || i == 9) ? d[i] != '-' : !isdigit((unsigned char)d[i]))
      return false;
  return true;
}

/* The newest directory of the URL's session below relay_dir, in path. */
static int session_dir(const char *relay_dir, const char *url, char *path, size_t path_len,
                       char *err, size_t err_len) {
  char host[256], session[256], best[NAME_MAX + 1] = "";
  if (url_names(url, host, sizeof(host), session, sizeof(session)) != 0) {
    snprintf(err, err_len, "--relay-dir: %s is not net://HOST/host/HOSTNAME/SESSION", url);
    return -1;
  }
  char hostdir[PATH_MAX];
  snprintf(hostdir, sizeof(hostdir), "%s/%s", relay_dir, host);
  DIR *d = opendir(hostdir);
  struct dirent *e;
  while (d != NULL && (e = readdir(d)) != NULL)
    if (is_session_dir(e->d_name, session) && strcmp(e->d_name, best) > 0)
      snprintf(best, sizeof(best), "%s", e->d_name);
  if (d != NULL)
    closedir(d);
  if (best[0] == '\0') {
    snprintf(err, err_len, "--relay-dir: no directory %s/%s-YYYYMMDD-HHMMSS: the relay's files"
             " of %s were not compared", hostdir, session, url);
    return -1;
  }
  if ((size_t)snprintf(path, path_len, "%s/%s", hostdir, best) >= path_len) {
    snprintf(err, err_len, "--relay-dir: path too long");
    return -1;
  }
  return 0;
}

/* The gap of host, added when new; NULL past RELAY_CHECK_MAX_HOSTS. */
static relay_gap *gap_of(relay_check *c, const char *host) {
  for (size_t i = 0; i < c->n_gaps; i++)
    if (strcmp(c->gaps[i].host, host) == 0)
      return &c->gaps[i];
  if (c->n_gaps == RELAY_CHECK_MAX_HOSTS)
    return NULL;
  char *copy = strdup(host);
  if (copy == NULL)
    return NULL;
  int64_t until = c->received_until(c->user, host);
  c->gaps[c->n_gaps] = (relay_gap){copy, until != INT64_MIN ? until : c->since_ns, 0, 0};
  return &c->gaps[c->n_gaps++];
}

static bool is_side(hop_event_kind k) {
  return k == HOP_SPAN_START || k == HOP_SPAN_START_SEND || k == HOP_SPAN_START_RECV ||
         k == HOP_SPAN_SIDE;
}

static int on_file_event(void *user, const hop_event *ev) {
  relay_check *c = user;
  if (c->only_trace != NULL &&
      (ev->trace_hi != c->only_trace[0] || ev->trace_lo != c->only_trace[1]))
    return 0;
  relay_gap *g = gap_of(c, ev->hostname != NULL ? ev->hostname : "");
  if (g == NULL || ev->ts_ns <= g->after_ns)
    return 0;
  g->events++;
  g->sides += is_side(ev->kind);
  if (c->unreceived != NULL)
    c->unreceived(c->user, ev, g->host);
  return 0;
}

static void on_file_loss(void *user, const hop_loss *loss) { (void)user, (void)loss; }

static int note_dir(relay_check *c, const char *path) {
  size_t had = c->dirs != NULL ? strlen(c->dirs) : 0;
  char *grown = realloc(c->dirs, had + strlen(path) + 3);
  if (grown == NULL)
    return -1;
  snprintf(grown + had, strlen(path) + 3, "%s%s", had ? ", " : "", path);
  c->dirs = grown;
  return 0;
}

int relay_check_run(relay_check *c, const char *relay_dir, const char *const *urls,
                    size_t n_urls, atomic_int *stop, char *err, size_t err_len) {
  bt_source_callbacks cb = {on_file_event, on_file_loss, NULL};
  for (size_t i = 0; i < n_urls; i++) {
    char path[PATH_MAX], why[512];
    if (session_dir(relay_dir, urls[i], path, sizeof(path), err, err_len) != 0)
      return -1;
    if (note_dir(c, path) != 0) {
      snprintf(err, err_len, "out of memory");
      return -1;
    }
    bt_source_stats st;
    /* the relay may have written part of a packet when the daemon died:
     * the events before that cut still count */
    if (bt_source_run(path, &cb, c, &st, stop, why, sizeof(why)) != 0 && st.events == 0) {
      snprintf(err, err_len, "--relay-dir: %s", why);
      return -1;
    }
  }
  return 0;
}

void relay_check_free(relay_check *c) {
  for (size_t i = 0; i < c->n_gaps; i++)
    free(c->gaps[i].host);
  free(c->dirs);
  c->n_gaps = 0;
  c->dirs = NULL;
}
