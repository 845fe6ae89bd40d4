/* `hoptrace report --format json`: the report's figures for programs.
 * Its per-hop blocks and fan-out waits in the text's order
 * (report_hops.h) and its aggregate critical path (report_cpagg.h),
 * beside the counts of what it was built from; the text report stays the
 * whole. */
#include <inttypes.h>
#include <stdlib.h>

#include "output/output.h"
#include "output/report_cpagg.h"
#include "output/report_hops.h"

struct output {
  obuf *out;
  cp_agg *cpagg;
  report_hops *hops;
};

static output *rjson_open(obuf *out, const output_info *info) {
  (void)info;
  output *o = calloc(1, sizeof(*o));
  if (o == NULL || (o->cpagg = cp_agg_new()) == NULL || (o->hops = report_hops_new()) == NULL) {
    if (o != NULL)
      cp_agg_free(o->cpagg);
    free(o);
    return NULL;
  }
  o->out = out;
  return o;
}

static void rjson_trace(output *o, const trace *t) {
  cp_agg_add(o->cpagg, t);
  report_hops_add(o->hops, t);
}

static int rjson_close(output *o, const bt_source_stats *src, const assembler_stats *st) {
  ob_printf(o->out, "{\"traces\":%" PRIu64 ",\"spans\":%" PRIu64 ",\"incomplete_traces\":%" PRIu64
                    ",\"discarded_events\":%" PRIu64 ",\"critical_path\":",
            st->traces, st->spans, st->incomplete_traces, src->discarded_events);
  cp_agg_json(o->cpagg, o->out);
  report_hops_json(o->hops, o->out);
  ob_printf(o->out, ",\"hop_samples_not_kept\":%" PRIu64 "}\n", report_hops_dropped(o->hops));
  int rc = obuf_error(o->out) ? -1 : 0;
  cp_agg_free(o->cpagg);
  report_hops_free(o->hops);
  free(o);
  return rc;
}

const output_format output_report_json = {"report-json", rjson_open, rjson_trace, rjson_close};
