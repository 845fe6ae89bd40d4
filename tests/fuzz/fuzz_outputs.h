/* Every output format of the tool written at once, into memory, from the
 * traces a fuzz target assembles; at close each document is checked:
 * Zipkin, OTLP, Chrome and the JSON report parse as JSON, the waterfall
 * page's data block is lines of JSON (as its script reads them) with no
 * `</script` inside, the text report is written without error. */
#ifndef HT_FUZZ_OUTPUTS_H
#define HT_FUZZ_OUTPUTS_H

#include "assemble/assemble.h"
#include "output/output.h"

typedef struct fuzz_outputs fuzz_outputs;

/* info stays the caller's until close. */
fuzz_outputs *fuzz_outputs_open(const output_info *info);
void fuzz_outputs_trace(fuzz_outputs *o, const trace *t);
/* Closes every format, checks each document (FUZZ_CHECK), frees o. */
void fuzz_outputs_close(fuzz_outputs *o, const assembler_stats *st);

#endif
