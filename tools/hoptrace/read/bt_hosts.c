/* Distinct host names of an input, read from each trace's environment
 * through libbabeltrace2 (never from the trace files themselves). */
#include "read/bt_hosts.h"

#include <babeltrace2/babeltrace.h>
#include <stdlib.h>
#include <string.h>

#include "read/trace_dirs.h"

#define HOST_NAME_CAP 256

typedef struct host_set {
  char names[64][HOST_NAME_CAP];
  size_t n;
  int more; /* past 64 distinct names: counted as many */
} host_set;

static void host_set_add(host_set *set, const char *name, size_t len) {
  if (len >= HOST_NAME_CAP)
    len = HOST_NAME_CAP - 1;
  for (size_t i = 0; i < set->n; i++)
    if (strncmp(set->names[i], name, len) == 0 && set->names[i][len] == '\0')
      return;
  if (set->n == sizeof(set->names) / sizeof(set->names[0])) {
    set->more = 1;
    return;
  }
  memcpy(set->names[set->n], name, len);
  set->names[set->n++][len] = '\0';
}

/* `hostname = "NAME";` inside the env block of the TSDL text. */
static void add_env_hostname(host_set *set, const char *tsdl) {
  const char *env = strstr(tsdl, "env {");
  const char *at = env != NULL ? strstr(env, "hostname = \"") : NULL;
  if (at == NULL) {
    host_set_add(set, "", 0);
    return;
  }
  at += strlen("hostname = \"");
  const char *end = strchr(at, '"');
  host_set_add(set, at, end != NULL ? (size_t)(end - at) : strlen(at));
}

static int query_hostname(const bt_component_class_source *cls, const char *dir,
                          host_set *set) {
  bt_value *params = bt_value_map_create();
  if (params == NULL || bt_value_map_insert_string_entry(params, "path", dir)) {
    bt_value_put_ref(params);
    return -1;
  }
  bt_query_executor *q = bt_query_executor_create(
      bt_component_class_source_as_component_class_const(cls), "metadata-info", params);
  const bt_value *result = NULL;
  if (q != NULL && bt_query_executor_query(q, &result) == BT_QUERY_EXECUTOR_QUERY_STATUS_OK &&
      bt_value_is_map(result)) {
    const bt_value *text = bt_value_map_borrow_entry_value_const(result, "text");
    if (text != NULL && bt_value_is_string(text))
      add_env_hostname(set, bt_value_string_get(text));
  } else {
    host_set_add(set, "", 0); /* unreadable here: the reading pass says why */
  }
  bt_current_thread_clear_error();
  bt_value_put_ref(result);
  bt_query_executor_put_ref(q);
  bt_value_put_ref(params);
  return 0;
}

static int add_file_hosts(const char *input, const bt_component_class_source *cls,
                          host_set *set) {
  char **dirs = NULL;
  size_t n = 0;
  int rc = bt_find_trace_dirs(input, &dirs, &n, 0);
  for (size_t i = 0; rc == 0 && i < n; i++)
    rc = query_hostname(cls, dirs[i], set);
  for (size_t i = 0; i < n; i++)
    free(dirs[i]);
  free(dirs);
  return rc;
}

/* net://RELAY[:PORT]/host/NAME/SESSION */
static void add_url_host(const char *url, host_set *set) {
  const char *at = strstr(url, "/host/");
  if (at == NULL) {
    host_set_add(set, "", 0);
    return;
  }
  at += strlen("/host/");
  const char *end = strchr(at, '/');
  host_set_add(set, at, end != NULL ? (size_t)(end - at) : strlen(at));
}

int bt_count_hosts(const char *const *inputs, size_t n_inputs) {
  host_set *set = calloc(1, sizeof(*set));
  const bt_plugin *plugin = NULL;
  const bt_component_class_source *cls = NULL;
  int rc = set != NULL ? 0 : -1;
  for (size_t i = 0; rc == 0 && i < n_inputs; i++) {
    if (strncmp(inputs[i], "net://", 6) == 0) {
      add_url_host(inputs[i], set);
      continue;
    }
    if (cls == NULL &&
        (bt_plugin_find("ctf", BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, &plugin) !=
             BT_PLUGIN_FIND_STATUS_OK ||
         (cls = bt_plugin_borrow_source_component_class_by_name_const(plugin, "fs")) == NULL))
      break; /* no babeltrace2: the reading pass reports it */
    rc = add_file_hosts(inputs[i], cls, set);
  }
  int count = rc == 0 ? (int)set->n + set->more : -1;
  bt_plugin_put_ref(plugin);
  free(set);
  return count;
}
