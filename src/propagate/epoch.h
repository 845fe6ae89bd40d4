/* Minimal epoch-based reclamation for the process-wide sampler: readers
 * never lock or write shared cache lines; a writer swaps the pointer, then
 * waits until no reader can still hold the old one, then frees it.
 *
 * Readers: ht_epoch_enter(); p = atomic_load(&global); use p;
 * ht_epoch_exit(). Read sections must be short and must not block or nest.
 * Writers: swap the pointer, ht_epoch_synchronize(), free the old object.
 */
#ifndef HT_PROPAGATE_EPOCH_H
#define HT_PROPAGATE_EPOCH_H

typedef struct ht_epoch_reader ht_epoch_reader;

/* Enters a read section; returns the handle to pass to ht_epoch_exit.
 * Never fails (without memory for a per-thread record, a shared counter
 * is used). */
ht_epoch_reader *ht_epoch_enter(void);
void ht_epoch_exit(ht_epoch_reader *r);

/* Waits until every reader that entered before this call has exited. */
void ht_epoch_synchronize(void);

#endif /* HT_PROPAGATE_EPOCH_H */
