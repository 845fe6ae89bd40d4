# cmake -DTOOL=hoptrace -DVERSION=X -DOUT=hoptrace.1 -P manpage.cmake:
# the manual page of the hoptrace command, made from its own --help at
# build time, so the page lists exactly the options the command takes.
execute_process(COMMAND ${TOOL} --help OUTPUT_VARIABLE help RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR help STREQUAL "")
  message(FATAL_ERROR "${TOOL} --help failed (${rc})")
endif()
# roff: a backslash is written \e, '-' \-, a line must not start with . or '
string(REPLACE "\\" "\\e" help "${help}")
string(REPLACE "-" "\\-" help "${help}")
string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" help "${help}")
file(WRITE ${OUT} ".TH HOPTRACE 1 \"\" \"hoptrace ${VERSION}\" \"User Commands\"
.SH NAME
hoptrace \\- LTTng sessions of traced messengers as spans, reports and views
.SH DESCRIPTION
hoptrace reads LTTng traces recorded by programs that use libhoptrace
(directories, or live sessions of an lttng\\-relayd) and writes their spans as
Zipkin v2 JSON, OTLP/JSON or Chrome trace events (export), a per\\-hop latency
report (report) or an HTML waterfall (view), or pushes them to a collector
(export \\-\\-to).
It also records a command in an LTTng session of its own (record) and sets a
traced process's sampling through its control socket (ctl).
.SH USAGE
.nf
${help}.fi
.SH SEE ALSO
.BR lttng (1),
.BR babeltrace2 (1)
")
