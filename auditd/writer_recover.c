/*
 * The writer's recovery: at start and after a failure (retry_seconds
 * apart), the head is derived again from what is on disk (logdir.c cuts
 * a torn tail), the I/O thread gets its file back, and what recovery did
 * is recorded (recovery, chain_start, audit_resumed with what was lost or
 * refused meanwhile), followed by a checkpoint.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "checkpoint.h"
#include "log.h"
#include "util.h"
#include "writer_int.h"

static void
new_chain_id(char out[CHAIN_ID_HEX + 1])
{
	uint8_t	 rnd[CHAIN_ID_HEX / 2];

	if (getentropy(rnd, sizeof(rnd)) == -1)
		fatal("getentropy");
	hex_encode(rnd, sizeof(rnd), out);
}

static void
record_recovery(struct writer *w, const struct recovery_note *rn)
{
	if (rn->cut) {
		log_warnx("recovery: cut %llu bytes of torn tail from %s",
		    (unsigned long long)rn->bytes, rn->file);
		writer_own_locked(w, "recovery", json_pack(
		    "{s:s, s:s, s:I, s:I, s:s, s:s}", "action", "cut_torn_tail",
		    "file", rn->file, "offset", (json_int_t)rn->offset,
		    "bytes", (json_int_t)rn->bytes, "sha256", rn->sha256,
		    "excerpt_base64", rn->excerpt));
	}
	if (rn->dropped)
		writer_own_locked(w, "recovery", json_pack("{s:s, s:s}", "action",
		    "removed_empty_file", "file", rn->dropped_file));
}

/*
 * Re-derives the head from disk and gives the I/O thread its file.  Runs
 * only while the I/O thread takes nothing (not started, or io_failed).
 */
int
writer_recover(struct writer *w, char *err, size_t errlen)
{
	static const uint8_t	 zero[SHA256_LEN];
	struct log_state	 st;
	struct recovery_note	 rn;

	if (logdir_recover(w->conf.log_dir, &st, &rn, err, errlen) == -1)
		return -1;
	writer_lock(w);
	if (w->fd != -1)
		close(w->fd);
	w->fd = st.fd;
	w->fd_size = st.size;
	w->zero_end = st.size;		/* recovery cut any zero tail */
	w->zero_fs = -1;
	if (st.empty) {
		/* A new chain: its first file holds chain_start. */
		new_chain_id(w->chain_id);
		chain_set_head(&w->chain, 0, zero);
		w->fill->newfile = 1;
		logfile_name(1, w->active);
		w->active_bytes = 0;
	} else {
		memcpy(w->chain_id, st.chain_id, sizeof(w->chain_id));
		chain_set_head(&w->chain, st.seq, st.hash);
		snprintf(w->active, sizeof(w->active), "%s", st.name);
		w->active_bytes = st.size;
	}
	memcpy(w->durable_active, w->active, sizeof(w->durable_active));
	__atomic_store_n(&w->durable_seq, w->chain.seq, __ATOMIC_RELEASE);
	memcpy(w->durable_hash, w->chain.hash, SHA256_LEN);
	w->state = W_RUNNING;
	if (st.empty)
		writer_own_locked(w, "chain_start", json_pack("{s:s, s:i}",
		    "chain_id", w->chain_id, "version", 1));
	record_recovery(w, &rn);
	w->io_failed = 0;
	writer_unlock(w);
	return 0;
}

void
writer_retry_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct writer	*w = arg;
	struct timeval	 tv = { w->conf.retry_seconds, 0 };
	char		 err[512];
	uint64_t	 dropped = w->dropped;

	if (writer_recover(w, err, sizeof(err)) == -1) {
		log_warnx("audit log still unavailable: %s", err);
		evtimer_add(w->retry_ev, &tv);
		return;
	}
	writer_lock(w);
	writer_own_locked(w, "audit_resumed", json_pack("{s:s, s:s, s:s, s:I}",
	    "reason", w->fail_reason, "action",
	    audit_action_name(w->fail_action), "since", w->fail_since,
	    w->fail_action == ACTION_KEEP_GOING ? "events_lost" :
	    "events_refused", (json_int_t)dropped));
	w->fill->reported += dropped;
	writer_checkpoint_locked(w);
	writer_unlock(w);
	log_info("audit log resumed after %s (%llu events %s)", w->fail_reason,
	    (unsigned long long)dropped,
	    w->fail_action == ACTION_KEEP_GOING ? "lost" : "refused");
}
