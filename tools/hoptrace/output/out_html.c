/* `hoptrace view`: one self-contained HTML file (inline CSS and script,
 * no network): a list of traces and a Zipkin-like waterfall for the one
 * selected, with annotations and tags on hover and click. Traces are
 * streamed into a script array as they are assembled. */
#include <inttypes.h>
#include <stdlib.h>

#include "output/json.h"
#include "output/output.h"

struct output {
  obuf *out;
};

static const char page_head[] =
    "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
    "<title>hoptrace waterfall</title>\n<style>\n"
    "body{font:13px system-ui,sans-serif;margin:0;display:flex;height:100vh}\n"
    "#list{width:34%;overflow:auto;border-right:1px solid #ccc}\n"
    "#main{flex:1;overflow:auto;padding:8px}\n"
    "table{border-collapse:collapse;width:100%}\n"
    ".trace-row td{padding:3px 6px;border-bottom:1px solid #eee;cursor:pointer}\n"
    ".trace-row:hover,.trace-row.sel{background:#e8f0fe}\n"
    ".bad{color:#b00020;font-weight:600}\n"
    ".span-row{display:flex;align-items:center;height:22px;cursor:pointer}\n"
    ".span-row:hover{background:#f4f4f4}\n"
    ".label{width:320px;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}\n"
    ".lane{position:relative;flex:1;height:16px}\n"
    ".bar{position:absolute;height:14px;top:1px;border-radius:2px;min-width:2px}\n"
    ".k1{background:#4e79a7}.k2{background:#59a14f}.k0,.k3,.k4{background:#9c755f}\n"
    ".err{background:#e15759!important}\n"
    ".ann{position:absolute;top:0;width:1px;height:16px;background:#000}\n"
    "#detail{white-space:pre-wrap;font-family:monospace;border-top:1px solid #ccc;"
    "margin-top:8px;padding-top:8px}\n"
    "</style></head><body>\n<div id=\"list\"><table id=\"traces\"></table></div>\n"
    "<div id=\"main\"><div id=\"title\"></div><div id=\"waterfall\"></div>"
    "<div id=\"detail\"></div></div>\n"
    "<script>\nconst TRACES=[];\n";

static const char page_tail[] =
    "</script>\n<script>\n"
    "const KIND=['internal','client','server','producer','consumer'];\n"
    "function fmt(us){return us>=1000?(us/1000).toFixed(2)+' ms':us.toFixed(1)+' us';}\n"
    "function order(t){const by={},roots=[],out=[];\n"
    " t.spans.forEach(s=>{by[s.id]=s;s.kids=[];});\n"
    " t.spans.forEach(s=>{const p=by[s.parent];if(p)p.kids.push(s);else roots.push(s);});\n"
    " const walk=(s,d)=>{s.depth=d;out.push(s);"
    "s.kids.sort((a,b)=>a.start-b.start).forEach(k=>walk(k,d+1));};\n"
    " roots.sort((a,b)=>a.start-b.start).forEach(r=>walk(r,0));return out;}\n"
    "function describe(s){let x=s.service+' / '+s.name+' ('+KIND[s.kind]+')\\n'+"
    "'span '+s.id+'  parent '+(s.parent||'-')+'\\nstart '+fmt(s.start)+'  duration '+"
    "(s.end>=0?fmt(s.end-s.start):'unfinished')+'\\n';\n"
    " if(s.status)x+='status '+s.status+'\\n';\n"
    " s.ann.forEach(a=>x+='  @'+fmt(a[0])+'  '+a[1]+'\\n');\n"
    " s.tags.forEach(g=>x+='  '+g[0]+' = '+g[1]+'\\n');return x;}\n"
    "function show(i){const t=TRACES[i];\n"
    " document.querySelectorAll('.trace-row').forEach((r,j)=>r.classList.toggle('sel',j===i));\n"
    " const spans=order(t);let span=1;spans.forEach(s=>{span=Math.max(span,s.end,s.start);});\n"
    " document.getElementById('title').innerHTML='';\n"
    " const h=document.createElement('h3');h.textContent='trace '+t.id+'  '+fmt(t.duration)+"
    "(t.incomplete?'  [incomplete: '+t.incomplete+']':'');document.getElementById('title').appendChild(h);\n"
    " const w=document.getElementById('waterfall');w.innerHTML='';\n"
    " spans.forEach(s=>{const row=document.createElement('div');row.className='span-row';\n"
    "  const l=document.createElement('div');l.className='label';l.style.paddingLeft=(s.depth*14)+'px';\n"
    "  l.textContent=s.service+' '+s.name;row.appendChild(l);\n"
    "  const lane=document.createElement('div');lane.className='lane';\n"
    "  const b=document.createElement('div');b.className='bar k'+s.kind+(s.status?' err':'');\n"
    "  const end=s.end>=0?s.end:span;b.style.left=(100*s.start/span)+'%';\n"
    "  b.style.width=(100*Math.max(end-s.start,0)/span)+'%';lane.appendChild(b);\n"
    "  s.ann.forEach(a=>{const m=document.createElement('div');m.className='ann';"
    "m.style.left=(100*a[0]/span)+'%';m.title=a[1]+' @'+fmt(a[0]);lane.appendChild(m);});\n"
    "  row.appendChild(lane);row.title=describe(s);\n"
    "  row.onclick=()=>{document.getElementById('detail').textContent=describe(s);};\n"
    "  w.appendChild(row);});\n"
    " document.getElementById('detail').textContent='';}\n"
    "const tb=document.getElementById('traces');\n"
    "TRACES.forEach((t,i)=>{const r=document.createElement('tr');r.className='trace-row';\n"
    " const root=t.spans.find(s=>!t.spans.some(p=>p.id===s.parent))||t.spans[0];\n"
    " [root?root.service+' '+root.name:'?',fmt(t.duration),t.spans.length+' spans',"
    "t.incomplete?'incomplete':''].forEach((v,k)=>{const c=document.createElement('td');"
    "c.textContent=v;if(k===3)c.className='bad';r.appendChild(c);});\n"
    " r.onclick=()=>show(i);tb.appendChild(r);});\n"
    "if(TRACES.length)show(0);else document.getElementById('title').textContent='no traces';\n"
    "</script></body></html>\n";

static output *html_open(obuf *out, const output_info *info) {
  (void)info;
  output *o = calloc(1, sizeof(*o));
  if (o == NULL)
    return NULL;
  o->out = out;
  ob_puts(out, page_head);
  return o;
}

static int64_t trace_start(const trace *t) {
  int64_t start = INT64_MAX;
  for (size_t i = 0; i < t->n_spans; i++) {
    const span *s = t->spans[i];
    int64_t at = s->started ? s->start_ns : (s->n_annotations ? s->annotations[0].ts_ns : s->end_ns);
    if (at && at < start)
      start = at;
  }
  return start == INT64_MAX ? 0 : start;
}

/* As doubles: a hostile clock can put ns and base far apart. */
static double rel_us(int64_t ns, int64_t base) { return ((double)ns - (double)base) / 1000.0; }

static void html_span(obuf *out, const span *s, int64_t base, int first) {
  int64_t start = s->started ? s->start_ns : (s->n_annotations ? s->annotations[0].ts_ns : base);
  ob_printf(out, "%s{id:", first ? "" : ",\n");
  json_hex64(out, s->id);
  ob_puts(out, ",parent:");
  if (s->parent_id)
    json_hex64(out, s->parent_id);
  else
    ob_puts(out, "\"\"");
  ob_puts(out, ",name:");
  json_string(out, s->name ? s->name : "unknown");
  ob_puts(out, ",service:");
  json_string(out, s->service ? s->service : "?");
  ob_printf(out, ",kind:%d,status:%d,start:%.3f,end:%.3f,ann:[", s->kind, s->status,
          rel_us(start, base), s->ended ? rel_us(s->end_ns, base) : -1.0);
  for (size_t i = 0; i < s->n_annotations; i++) {
    ob_printf(out, "%s[%.3f,", i ? "," : "", rel_us(s->annotations[i].ts_ns, base));
    json_string(out, s->annotations[i].value);
    ob_putc(out, ']');
  }
  ob_puts(out, "],tags:[");
  for (size_t i = 0; i < s->n_tags; i++) {
    ob_puts(out, i ? ",[" : "[");
    json_string(out, s->tags[i].key);
    if (s->tags[i].is_int)
      ob_printf(out, ",\"%" PRId64 "\"]", s->tags[i].int_value);
    else {
      ob_putc(out, ',');
      json_string(out, s->tags[i].str_value);
      ob_putc(out, ']');
    }
  }
  int any = s->n_tags > 0;
  if (s->endpoint) {
    ob_puts(out, any ? ",[\"endpoint\"," : "[\"endpoint\",");
    json_string(out, s->endpoint);
    ob_putc(out, ']');
    any = 1;
  }
  if (s->clock_bound_ns >= 0)
    ob_printf(out, "%s[\"clock shift (ns)\",\"%" PRId64 " +- %" PRId64 "\"]", any ? "," : "",
              s->clock_shift_ns, s->clock_bound_ns);
  ob_puts(out, "]}");
}

static void html_trace(output *o, const trace *t) {
  char why[160];
  int64_t base = trace_start(t), end = base;
  for (size_t i = 0; i < t->n_spans; i++)
    if (t->spans[i]->ended && t->spans[i]->end_ns > end)
      end = t->spans[i]->end_ns;
  ob_puts(o->out, "TRACES.push({id:");
  json_trace_id(o->out, t->trace_hi, t->trace_lo, 0);
  ob_printf(o->out, ",duration:%.3f,incomplete:", rel_us(end, base));
  json_string(o->out, t->incomplete ? trace_incomplete_reason(t, why, sizeof(why)) : "");
  ob_puts(o->out, ",spans:[\n");
  for (size_t i = 0; i < t->n_spans; i++)
    html_span(o->out, t->spans[i], base, i == 0);
  ob_puts(o->out, "]});\n");
}

static int html_close(output *o, const bt_source_stats *src, const assembler_stats *st) {
  (void)src;
  (void)st;
  ob_puts(o->out, page_tail);
  int rc = obuf_error(o->out) ? -1 : 0;
  free(o);
  return rc;
}

const output_format output_html = {"html", html_open, html_trace, html_close};
