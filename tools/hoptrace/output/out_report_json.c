/* `hoptrace report --format json`: the report's figures for programs.
 * For now its aggregate critical path (report_cpagg.h), beside the
 * counts of what it was built from; the text report stays the whole. */
#include <inttypes.h>
#include <stdlib.h>

#include "output/output.h"
#include "output/report_cpagg.h"

struct output {
  obuf *out;
  cp_agg *cpagg;
};

static output *rjson_open(obuf *out, const output_info *info) {
  (void)info;
  output *o = calloc(1, sizeof(*o));
  if (o == NULL || (o->cpagg = cp_agg_new()) == NULL) {
    free(o);
    return NULL;
  }
  o->out = out;
  return o;
}

static void rjson_trace(output *o, const trace *t) { cp_agg_add(o->cpagg, t); }

static int rjson_close(output *o, const bt_source_stats *src, const assembler_stats *st) {
  ob_printf(o->out, "{\"traces\":%" PRIu64 ",\"spans\":%" PRIu64 ",\"incomplete_traces\":%" PRIu64
                    ",\"discarded_events\":%" PRIu64 ",\"critical_path\":",
            st->traces, st->spans, st->incomplete_traces, src->discarded_events);
  cp_agg_json(o->cpagg, o->out);
  ob_puts(o->out, "}\n");
  int rc = obuf_error(o->out) ? -1 : 0;
  cp_agg_free(o->cpagg);
  free(o);
  return rc;
}

const output_format output_report_json = {"report-json", rjson_open, rjson_trace, rjson_close};
