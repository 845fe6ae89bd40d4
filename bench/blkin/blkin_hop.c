/* The two-sided hop of bench/recording, through Blkin's API (ceph/blkin,
 * built by bench/blkin/build.sh from a source it is given; not part of
 * the normal build, Blkin is not a dependency):
 *   blkin_hop WARM N   runs WARM + N hops, the last N between callgrind's
 *                      toggles; prints "hops WARM+N"
 * Each hop: a client span (child of one root), cs, the client's ids
 * packed and unpacked (Blkin's wire form), the server span started from
 * them, sr, one integer key-value, ss, cr: five events, as Blkin records
 * one event per annotation. */
#include <stdio.h>
#include <stdlib.h>
#include <valgrind/callgrind.h>
#include <zipkin_c.h>

static struct blkin_endpoint client_ep = {"127.0.0.1", 0, "client.4"};
static struct blkin_endpoint server_ep = {"127.0.0.1", 6800, "osd.3"};

static void hops(const struct blkin_trace *root, unsigned n) {
  for (unsigned i = 0; i < n; i++) {
    struct blkin_trace client, server;
    struct blkin_trace_info info;
    struct blkin_trace_info_packed wire;
    blkin_init_child(&client, root, &client_ep, "osd_write");
    BLKIN_TIMESTAMP(&client, &client_ep, CLIENT_SEND);
    blkin_get_trace_info(&client, &info);
    blkin_pack_trace_info(&info, &wire);
    blkin_unpack_trace_info(&wire, &info);
    blkin_init_child_info(&server, &info, &server_ep, "osd_write");
    BLKIN_TIMESTAMP(&server, &server_ep, SERVER_RECV);
    BLKIN_KEYVAL_INTEGER(&server, &server_ep, "bytes", 4096);
    BLKIN_TIMESTAMP(&server, &server_ep, SERVER_SEND);
    BLKIN_TIMESTAMP(&client, &client_ep, CLIENT_RECV);
  }
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fputs("usage: blkin_hop WARM N\n", stderr);
    return 2;
  }
  unsigned warm = (unsigned)strtoul(argv[1], NULL, 10);
  unsigned n = (unsigned)strtoul(argv[2], NULL, 10);
  struct blkin_trace root;
  if (blkin_init() != 0 || blkin_init_new_trace(&root, "bench", &client_ep) != 0) {
    fputs("blkin_hop: blkin_init failed\n", stderr);
    return 1;
  }
  hops(&root, warm);
  CALLGRIND_START_INSTRUMENTATION;
  hops(&root, n);
  CALLGRIND_STOP_INSTRUMENTATION;
  /* its probes are linked in: the provider is there from the start */
  printf("hops %u\nprovider loaded\n", warm + n);
  return 0;
}
