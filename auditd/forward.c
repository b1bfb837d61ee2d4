/*
 * The forwarders.  Each reads records from the log directory, never ahead
 * of what the writer made durable, and sends each line as the MSG of an
 * RFC 5424 message (MSGID = the event) over TLS with octet-counted
 * framing (RFC 5425).  The collector is verified against `ca` (and
 * `server_name`); nothing it sends is read.
 *
 * Delivery: syslog has no acknowledgements, so a record counts as
 * delivered when the collector's TCP stack has acknowledged its bytes
 * (SIOCOUTQ empty).  After a lost connection the forwarder resumes from
 * what was delivered `resend_window_s` before, since a collector that
 * died may not have read what its kernel acknowledged: an outage can
 * repeat records (same seq and hash, so a SIEM can drop them), never lose
 * them.  A clean stop waits for the last bytes to be acknowledged and
 * closes the TLS session, so a restart repeats nothing.
 *
 * The connection (forward_conn.c) is non-blocking and every wait looks
 * at the stop deadline: a collector that stalls (never answers the
 * handshake, stops reading) cannot hold the daemon's stop beyond it.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "chain.h"
#include "forward.h"
#include "forward_int.h"
#include "log.h"
#include "logdir.h"
#include "util.h"

#define FWD_LINE_MAX		(1024 * 1024)	/* longest record read */
#define FWD_BATCH		256		/* records per send burst */
#define FWD_IDLE_MS		100		/* nothing new: look again */
#define FWD_BACKOFF_MAX_S	30
/* At stop: catch up while the daemon still serves, then the last records. */
#define FWD_CATCHUP_MS		3000
#define FWD_FINAL_MS		1000
#define FWD_PRI			110		/* facility 13 (log audit), info */
#define FWD_APP			"stockade-auditd"
#define FWD_MSGID_MAX		32		/* RFC 5424 */

struct forwarders {
	struct fwd	*fw;
	size_t		 n;
	uint64_t	 catchup_seq, catchup_until;	/* forward_catch_up */
};

static void
fwd_report(struct fwd *fw, int connected, const char *error)
{
	pthread_mutex_lock(&fw->mu);
	fw->st_connected = connected;
	fw->st_delivered = fw->delivered > fw->saved ? fw->delivered : fw->saved;
	/* Connected: no error; an old one would read as a current fault. */
	snprintf(fw->st_error, sizeof(fw->st_error), "%s",
	    error != NULL ? error : "");
	pthread_mutex_unlock(&fw->mu);
}

/* Sleeps ms, waking early when asked to stop. */
static void
fwd_sleep(struct fwd *fw, unsigned ms)
{
	struct timespec	 ts = { 0, 50 * 1000000L };
	unsigned	 i;

	for (i = 0; i < ms / 50 && !fwd_stopping(fw); i++)
		nanosleep(&ts, NULL);
}

/* ------------------------------------------------------------ cursor */

static void
cursor_load(struct fwd *fw)
{
	char		*data;
	size_t		 len;
	uint64_t	 v;

	fw->saved = 0;
	if (read_file(fw->cursor_path, 64, &data, &len) == -1)
		return;
	if (len > 0 && data[len - 1] == '\n')
		data[len - 1] = '\0';
	if (parse_u64(data, 0, UINT64_MAX, &v) == 0)
		fw->saved = v;
	else
		log_warnx("forward %s: %s unreadable; starting from the "
		    "oldest record", fw->cf.name, fw->cursor_path);
	free(data);
}

static void
cursor_save(struct fwd *fw, uint64_t seq, int durable)
{
	char	 tmp[PATH_MAX + 8], buf[32];
	int	 fd, n;

	if (seq == fw->saved)
		return;
	n = snprintf(buf, sizeof(buf), "%llu\n", (unsigned long long)seq);
	if (xsnprintf(tmp, sizeof(tmp), "%s.tmp", fw->cursor_path) == -1 ||
	    (fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640)) ==
	    -1) {
		log_warn("forward %s: %s", fw->cf.name, fw->cursor_path);
		return;
	}
	if (write_all(fd, buf, (size_t)n) == -1 ||
	    (durable && fsync(fd) == -1) || close(fd) == -1 ||
	    rename(tmp, fw->cursor_path) == -1) {
		log_warn("forward %s: %s", fw->cf.name, fw->cursor_path);
		return;
	}
	fw->saved = seq;
}

/* Delivered as of resend_window_s ago: where a lost connection resumes. */
static uint64_t
cursor_safe(struct fwd *fw)
{
	uint64_t	 now = mono_ms(), safe = fw->saved;
	size_t		 i;

	for (i = 0; i < fw->nring; i++)
		if (now - fw->ring[i].at_ms >= fw->cf.resend_window_s * 1000ULL &&
		    fw->ring[i].seq > safe)
			safe = fw->ring[i].seq;
	return safe;
}

static void
mark_delivered(struct fwd *fw, uint64_t seq)
{
	if (seq <= fw->delivered)
		return;
	fw->delivered = seq;
	if (fw->nring == FWD_RING) {
		memmove(fw->ring, fw->ring + 1, sizeof(fw->ring[0]) *
		    (FWD_RING - 1));
		fw->nring--;
	}
	fw->ring[fw->nring].seq = seq;
	fw->ring[fw->nring++].at_ms = mono_ms();
}

/* ------------------------------------------------------------ reader */

static void
reader_close(struct fwd *fw)
{
	if (fw->f != NULL)
		fclose(fw->f);
	fw->f = NULL;
}

/*
 * Positions the reader at the first record after seq (no file yet: no
 * position, fw->f stays NULL).  Records older than the oldest file were
 * deleted by retention: said in the log.
 */
static int
reader_seek(struct fwd *fw, uint64_t seq)
{
	struct logfile		*files = NULL;
	struct chain_line	 cl;
	const char		*why;
	char			 path[PATH_MAX];
	size_t			 n = 0, i, pick;
	ssize_t			 len;
	long			 pos;

	reader_close(fw);
	if (logdir_list(fw->log_dir, &files, &n) == -1)
		return -1;
	if (n == 0) {
		/* Not written yet: send_burst looks again. */
		free(files);
		return 0;
	}
	for (pick = 0, i = 0; i < n; i++)
		if (files[i].first_seq <= seq + 1)
			pick = i;
	if (seq + 1 < files[0].first_seq)
		log_warnx("forward %s: records %llu to %llu were deleted before "
		    "they could be sent", fw->cf.name,
		    (unsigned long long)seq + 1,
		    (unsigned long long)files[0].first_seq - 1);
	if (xsnprintf(path, sizeof(path), "%s/%s", fw->log_dir,
	    files[pick].name) == -1 || (fw->f = fopen(path, "re")) == NULL) {
		free(files);
		return -1;
	}
	fw->file_first = files[pick].first_seq;
	free(files);
	for (;;) {
		pos = ftell(fw->f);
		if ((len = getline(&fw->line, &fw->linecap, fw->f)) <= 0 ||
		    fw->line[len - 1] != '\n' ||
		    memchr(fw->line, '\0', (size_t)len) != NULL)
			break;
		if (chain_parse(fw->line, (size_t)len - 1, &cl, &why) == 0 &&
		    cl.seq > seq)
			break;
	}
	clearerr(fw->f);
	(void)fseek(fw->f, pos, SEEK_SET);
	return 0;
}

/* The next file after the current one, once this one is read to its end. */
static int
reader_next_file(struct fwd *fw)
{
	struct logfile	*files;
	char		 path[PATH_MAX];
	size_t		 n, i;
	FILE		*f = NULL;

	if (logdir_list(fw->log_dir, &files, &n) == -1)
		return -1;
	for (i = 0; i < n; i++)
		if (files[i].first_seq > fw->file_first)
			break;
	if (i < n && xsnprintf(path, sizeof(path), "%s/%s", fw->log_dir,
	    files[i].name) != -1 && (f = fopen(path, "re")) != NULL) {
		reader_close(fw);
		fw->f = f;
		fw->file_first = files[i].first_seq;
	}
	free(files);
	return f != NULL ? 0 : -1;
}

/*
 * The next whole record at or below limit: 1 with its line (without
 * '\n') and seq, 0 when there is none yet.
 */
static int
reader_next(struct fwd *fw, uint64_t limit, size_t *len, struct chain_line *cl)
{
	const char	*why;
	ssize_t		 n;
	long		 pos;

	for (;;) {
		if (fw->f == NULL)
			return 0;
		pos = ftell(fw->f);
		n = getline(&fw->line, &fw->linecap, fw->f);
		/* A NUL: the zeros ahead of the records, or a batch being
		 * written over them; nothing to send yet. */
		if (n > 0 && memchr(fw->line, '\0', (size_t)n) != NULL) {
			clearerr(fw->f);
			(void)fseek(fw->f, pos, SEEK_SET);
			return 0;
		}
		if (n > 0 && fw->line[n - 1] == '\n') {
			if ((size_t)n > FWD_LINE_MAX ||
			    chain_parse(fw->line, (size_t)n - 1, cl, &why) ==
			    -1) {
				log_warnx("forward %s: a record that does not "
				    "parse (%s); skipped", fw->cf.name,
				    (size_t)n > FWD_LINE_MAX ? "too long" : why);
				continue;
			}
			if (cl->seq > limit)
				break;
			*len = (size_t)n - 1;
			return 1;
		}
		/* The end, or a line still being written. */
		clearerr(fw->f);
		(void)fseek(fw->f, pos, SEEK_SET);
		if (n > 0 || reader_next_file(fw) == -1)
			return 0;
	}
	clearerr(fw->f);
	(void)fseek(fw->f, pos, SEEK_SET);
	return 0;
}

/* ------------------------------------------------------------ sending */

/* One record as "LEN <110>1 TS HOST APP - MSGID - LINE" (RFC 5425). */
static int
send_record(struct fwd *fw, const char *line, size_t len,
    const struct chain_line *cl)
{
	char	 head[512], frame[32];
	int	 hl, fl;
	size_t	 idlen = cl->eventlen < FWD_MSGID_MAX ? cl->eventlen :
		    FWD_MSGID_MAX;

	hl = snprintf(head, sizeof(head), "<%d>1 %.*s %s %s - %.*s - ",
	    FWD_PRI, TS_LEN, cl->ts, fw->hostname, FWD_APP, (int)idlen,
	    cl->event);
	if (hl < 0 || (size_t)hl >= sizeof(head))
		return -1;
	fl = snprintf(frame, sizeof(frame), "%zu ", (size_t)hl + len);
	if (fwd_tls_write(fw, frame, fl) == -1 ||
	    fwd_tls_write(fw, head, hl) == -1 ||
	    fwd_tls_write(fw, line, (int)len) == -1)
		return -1;
	return 0;
}

/* Sends what is durable and not yet sent; -1 when the connection broke. */
static int
send_burst(struct fwd *fw, int *any)
{
	struct chain_line	 cl;
	uint64_t		 limit = writer_durable_seq(fw->w);
	size_t			 len;
	int			 n;

	*any = 0;
	/* No file yet when the connection came up (the writer's first batch
	 * was still on its way to disk): look again. */
	if (fw->f == NULL && fw->sent < limit && reader_seek(fw, fw->sent) == -1)
		return 0;
	for (n = 0; n < FWD_BATCH && fw->sent < limit; n++) {
		if (reader_next(fw, limit, &len, &cl) != 1)
			break;
		if (cl.seq <= fw->sent)
			continue;
		if (send_record(fw, fw->line, len, &cl) == -1)
			return -1;
		fw->sent = cl.seq;
		*any = 1;
	}
	if (fwd_all_acked(fw))
		mark_delivered(fw, fw->sent);
	return 0;
}

static void
fwd_connected(struct fwd *fw)
{
	uint64_t	 from = cursor_safe(fw);

	fw->sent = fw->delivered = from;
	fw->nring = 0;
	if (reader_seek(fw, from) == -1)
		log_warnx("forward %s: cannot read %s", fw->cf.name,
		    fw->log_dir);
	log_info("forward %s: connected to %s:%s, sending from seq %llu",
	    fw->cf.name, fw->cf.host, fw->cf.port,
	    (unsigned long long)from + 1);
	fw->down_logged = 0;
}

static void *
fwd_main(void *arg)
{
	struct fwd	*fw = arg;
	char		 err[512];
	unsigned	 backoff = 1;
	int		 any;

	while (!fwd_stopping(fw)) {
		if (fw->ssl == NULL) {
			if (fwd_conn_open(fw, err, sizeof(err)) == -1) {
				if (fwd_stopping(fw))
					break;
				fwd_report(fw, 0, err);
				if (!fw->down_logged++)
					log_warnx("forward %s: %s:%s: %s; "
					    "retrying", fw->cf.name, fw->cf.host,
					    fw->cf.port, err);
				fwd_sleep(fw, backoff * 1000);
				if (backoff < FWD_BACKOFF_MAX_S)
					backoff *= 2;
				continue;
			}
			backoff = 1;
			fwd_connected(fw);
		}
		if (send_burst(fw, &any) == -1) {
			if (fwd_stopping(fw))
				break;		/* its deadline, said below */
			fwd_report(fw, 0, "connection lost");
			log_warnx("forward %s: connection lost after seq %llu; "
			    "resuming from seq %llu", fw->cf.name,
			    (unsigned long long)fw->sent,
			    (unsigned long long)cursor_safe(fw) + 1);
			fwd_conn_close(fw, 0);
			continue;
		}
		cursor_save(fw, cursor_safe(fw), 0);
		fwd_report(fw, 1, NULL);
		if (!any)
			fwd_sleep(fw, FWD_IDLE_MS);
	}
	/* Stopping: what is durable goes out, acknowledged, then the cursor;
	 * every write is bounded by stop_by too. */
	while (fw->ssl != NULL && mono_ms() < fwd_stop_by(fw)) {
		if (send_burst(fw, &any) == -1) {
			fwd_conn_close(fw, 0);
			break;
		}
		if (!any && fw->sent >= writer_durable_seq(fw->w) &&
		    fw->delivered == fw->sent)
			break;
		if (!any)
			nanosleep(&(struct timespec){ 0, 20 * 1000000L }, NULL);
	}
	if (fw->sent > fw->delivered)
		log_warnx("forward %s: stopped before the collector "
		    "acknowledged seq %llu to %llu; the next start sends them "
		    "again", fw->cf.name, (unsigned long long)fw->delivered + 1,
		    (unsigned long long)fw->sent);
	if (fw->ssl != NULL) {
		cursor_save(fw, fw->delivered, 1);
		fwd_conn_close(fw, 1);
	} else
		cursor_save(fw, cursor_safe(fw), 1);
	reader_close(fw);
	return NULL;
}

struct forwarders *
forward_start(const struct audit_conf *conf, struct writer *w)
{
	struct forwarders	*fs;
	struct fwd		*fw;
	size_t			 i;

	if (conf->nforward == 0)
		return NULL;
	fs = xcalloc(1, sizeof(*fs));
	fs->fw = xcalloc(conf->nforward, sizeof(*fs->fw));
	for (i = 0; i < conf->nforward; i++) {
		fw = &fs->fw[fs->n];
		fw->cf = conf->forward[i];
		fw->w = w;
		fw->fd = -1;
		pthread_mutex_init(&fw->mu, NULL);
		snprintf(fw->log_dir, sizeof(fw->log_dir), "%s", conf->log_dir);
		if (xsnprintf(fw->cursor_path, sizeof(fw->cursor_path),
		    "%s/.forward-%s.cursor", conf->log_dir, fw->cf.name) == -1 ||
		    (fw->ctx = fwd_ctx_new(&fw->cf)) == NULL)
			fatalx("forward %s: cannot start", fw->cf.name);
		/* A fleet's node names its records in the SIEM by its id. */
		if (conf->node_id[0] != '\0')
			snprintf(fw->hostname, sizeof(fw->hostname), "%s",
			    conf->node_id);
		else if (gethostname(fw->hostname, sizeof(fw->hostname) - 1) ==
		    -1 || fw->hostname[0] == '\0')
			snprintf(fw->hostname, sizeof(fw->hostname), "-");
		cursor_load(fw);
		if (pthread_create(&fw->thread, NULL, fwd_main, fw) != 0)
			fatalx("pthread_create");
		fs->n++;
	}
	return fs;
}

void
forward_catch_up(struct forwarders *fs, uint64_t seq)
{
	if (fs == NULL)
		return;
	fs->catchup_seq = seq;
	fs->catchup_until = mono_ms() + FWD_CATCHUP_MS;
}

int
forward_caught_up(struct forwarders *fs)
{
	struct fwd	*fw;
	size_t		 i;
	int		 behind = 0;

	if (fs == NULL || mono_ms() >= fs->catchup_until)
		return 1;
	/* One that is down has nothing on its way: it starts over later. */
	for (i = 0; i < fs->n && !behind; i++) {
		fw = &fs->fw[i];
		pthread_mutex_lock(&fw->mu);
		behind = fw->st_connected && fw->st_delivered < fs->catchup_seq;
		pthread_mutex_unlock(&fw->mu);
	}
	return !behind;
}

void
forward_stop(struct forwarders *fs)
{
	uint64_t	 stop_by = mono_ms() + FWD_FINAL_MS;
	size_t		 i;

	if (fs == NULL)
		return;
	for (i = 0; i < fs->n; i++)
		__atomic_store_n(&fs->fw[i].stop_by, stop_by, __ATOMIC_RELEASE);
	for (i = 0; i < fs->n; i++) {
		pthread_join(fs->fw[i].thread, NULL);
		pthread_mutex_destroy(&fs->fw[i].mu);
		SSL_CTX_free(fs->fw[i].ctx);
		free(fs->fw[i].line);
	}
	free(fs->fw);
	free(fs);
}

json_t *
forward_status(struct forwarders *fs)
{
	json_t		*list = json_array();
	struct fwd	*fw;
	size_t		 i;

	for (i = 0; fs != NULL && i < fs->n; i++) {
		fw = &fs->fw[i];
		pthread_mutex_lock(&fw->mu);
		json_array_append_new(list, json_pack("{s:s, s:s++, s:b, s:I, "
		    "s:s}", "name", fw->cf.name, "address", fw->cf.host, ":",
		    fw->cf.port, "connected", fw->st_connected, "delivered_seq",
		    (json_int_t)fw->st_delivered, "error", fw->st_error));
		pthread_mutex_unlock(&fw->mu);
	}
	return list;
}
