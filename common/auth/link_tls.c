/* See link_tls.h: the link's TLS through libssl. */
#include "link_tls.h"
#include "guarded_file.h"

#include <errno.h>
#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* a certificate chain or a CA bundle: a few KiB each, never this much */
#define TLS_FILE_MAX (512u * 1024)
/* what one SSL_write takes: a TLS record's most */
#define TLS_RECORD_BYTES 16384

struct pl_tls_server {
	SSL_CTX *ctx;
};

struct pl_tls_client {
	SSL_CTX *ctx;
	char *server_name;
	bool pinned;
	uint8_t fingerprint[PL_TLS_FINGERPRINT_BYTES];
};

struct tls_conn {
	struct pl_link_conn base;
	SSL *ssl;
	const struct pl_tls_client *client; /* NULL: the device's side */
	/* the pieces of one send gathered into whole records, so that a
	 * message's header, payload and padding do not go as three */
	uint8_t gather[TLS_RECORD_BYTES];
};

bool pl__link_tls_available(void)
{
	return true;
}

/* OpenSSL's reason for the last failure, or what, when it has none. */
static void ssl_reason(char *err, size_t err_len, const char *prefix, const char *what)
{
	unsigned long e = ERR_peek_last_error();
	const char *reason = e ? ERR_reason_error_string(e) : NULL;

	snprintf(err, err_len, "%s%s", prefix, reason ? reason : what);
	ERR_clear_error();
}

static int no_passphrase(char *buf, int size, int rwflag, void *u)
{
	(void)buf;
	(void)size;
	(void)rwflag;
	(void)u;
	return 0; /* an encrypted key cannot be opened by a daemon: refused */
}

/* A PEM file read through guarded_file.h into a memory BIO. */
static BIO *pem_file(const char *path, bool secret, uint8_t **buf, char *err, size_t err_len)
{
	size_t len;
	BIO *b;

	if (!(*buf = malloc(TLS_FILE_MAX))) {
		snprintf(err, err_len, "%s: out of memory", path);
		return NULL;
	}
	if (pl__guarded_file_read(path, secret, 1, *buf, TLS_FILE_MAX, &len, err, err_len) < 0)
		return NULL;
	if (!(b = BIO_new_mem_buf(*buf, (int)len)))
		snprintf(err, err_len, "%s: out of memory", path);
	return b;
}

static void pem_done(BIO *b, uint8_t *buf)
{
	BIO_free(b);
	if (buf)
		OPENSSL_cleanse(buf, TLS_FILE_MAX);
	free(buf);
}

static SSL_CTX *new_ctx(const SSL_METHOD *method)
{
	SSL_CTX *ctx = SSL_CTX_new(method);

	if (!ctx)
		return NULL;
	if (!SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION)) {
		SSL_CTX_free(ctx);
		return NULL;
	}
	/* a send takes what fits and the rest is offered again later, maybe
	 * from the caller's own buffer (link_conn.h) */
	SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
#ifdef SSL_OP_IGNORE_UNEXPECTED_EOF
	/* a peer that closes without close_notify has ended its stream: the
	 * wire's messages carry their own lengths and checksums */
	SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
#endif
	return ctx;
}

static int load_server_files(SSL_CTX *ctx, const char *cert_file, const char *key_file,
			     char *err, size_t err_len)
{
	uint8_t *cbuf = NULL, *kbuf = NULL;
	BIO *cb = NULL, *kb = NULL;
	EVP_PKEY *key = NULL;
	X509 *x;
	int ret = -EINVAL;

	if (!(cb = pem_file(cert_file, false, &cbuf, err, err_len)))
		goto out;
	if (!(x = PEM_read_bio_X509(cb, NULL, NULL, NULL))) {
		snprintf(err, err_len, "%s: no PEM certificate in it", cert_file);
		goto out;
	}
	if (!SSL_CTX_use_certificate(ctx, x)) {
		X509_free(x);
		ssl_reason(err, err_len, cert_file, ": unusable certificate");
		goto out;
	}
	X509_free(x);
	/* the rest of the file is the chain up to the CA, if any */
	while ((x = PEM_read_bio_X509(cb, NULL, NULL, NULL)))
		if (!SSL_CTX_add0_chain_cert(ctx, x))
			X509_free(x);
	ERR_clear_error(); /* the end of the file */
	ret = -EPERM;
	if (!(kb = pem_file(key_file, true, &kbuf, err, err_len)))
		goto out;
	ret = -EINVAL;
	if (!(key = PEM_read_bio_PrivateKey(kb, NULL, no_passphrase, NULL))) {
		snprintf(err, err_len, "%s: no unencrypted PEM private key in it", key_file);
		ERR_clear_error();
		goto out;
	}
	if (!SSL_CTX_use_PrivateKey(ctx, key) || !SSL_CTX_check_private_key(ctx)) {
		snprintf(err, err_len, "%s: not the private key of %s", key_file, cert_file);
		ERR_clear_error();
		goto out;
	}
	ret = 0;
out:
	EVP_PKEY_free(key);
	pem_done(cb, cbuf);
	pem_done(kb, kbuf);
	return ret;
}

int pl__tls_server_open(struct pl_tls_server **out, const char *cert_file, const char *key_file,
			char *err, size_t err_len)
{
	struct pl_tls_server *s = calloc(1, sizeof(*s));
	int ret;

	if (!s || !(s->ctx = new_ctx(TLS_server_method()))) {
		snprintf(err, err_len, "cannot make a TLS 1.3 context");
		free(s);
		return -ENOMEM;
	}
	/* no resumption: a host connects seldom, and tickets are state to keep */
	SSL_CTX_set_num_tickets(s->ctx, 0);
	SSL_CTX_set_session_cache_mode(s->ctx, SSL_SESS_CACHE_OFF);
	if ((ret = load_server_files(s->ctx, cert_file, key_file, err, err_len)) < 0) {
		pl__tls_server_close(s);
		return ret;
	}
	*out = s;
	return 0;
}

void pl__tls_server_close(struct pl_tls_server *s)
{
	if (!s)
		return;
	SSL_CTX_free(s->ctx);
	free(s);
}

static int hexval(int ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

bool pl__tls_parse_fingerprint(const char *text, uint8_t out[PL_TLS_FINGERPRINT_BYTES])
{
	size_t n = 0;

	/* `openssl x509 -fingerprint` prints "sha256 Fingerprint=AB:CD:..." */
	if (strchr(text, '='))
		text = strchr(text, '=') + 1;
	while (*text) {
		int hi, lo;

		if (*text == ':') {
			text++;
			continue;
		}
		hi = hexval(text[0]);
		lo = hi < 0 ? -1 : hexval(text[1]);
		if (lo < 0 || n == PL_TLS_FINGERPRINT_BYTES)
			return false;
		out[n++] = (uint8_t)(hi << 4 | lo);
		text += 2;
	}
	return n == PL_TLS_FINGERPRINT_BYTES;
}

static int load_ca(SSL_CTX *ctx, const char *ca_file, char *err, size_t err_len)
{
	X509_STORE *store = SSL_CTX_get_cert_store(ctx);
	uint8_t *buf = NULL;
	BIO *b = pem_file(ca_file, false, &buf, err, err_len);
	unsigned count = 0;
	X509 *x;

	if (!b) {
		pem_done(b, buf);
		return -EINVAL;
	}
	while ((x = PEM_read_bio_X509(b, NULL, NULL, NULL))) {
		if (X509_STORE_add_cert(store, x))
			count++;
		X509_free(x);
	}
	ERR_clear_error();
	pem_done(b, buf);
	if (!count) {
		snprintf(err, err_len, "%s: no PEM certificate in it", ca_file);
		return -EINVAL;
	}
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	return 0;
}

int pl__tls_client_open(struct pl_tls_client **out, const struct pl_tls_client_config *cfg,
			char *err, size_t err_len)
{
	struct pl_tls_client *c = calloc(1, sizeof(*c));
	int ret = -EINVAL;

	if (!c || !(c->ctx = new_ctx(TLS_client_method())) ||
	    !(c->server_name = strdup(cfg->server_name ? cfg->server_name : ""))) {
		snprintf(err, err_len, "cannot make a TLS 1.3 context");
		ret = -ENOMEM;
		goto fail;
	}
	if (cfg->ca_file && cfg->fingerprint) {
		snprintf(err, err_len, "a CA file or a fingerprint, not both");
		goto fail;
	}
	if (cfg->fingerprint) {
		if (!pl__tls_parse_fingerprint(cfg->fingerprint, c->fingerprint)) {
			snprintf(err, err_len, "fingerprint \"%.100s\" is not 32 bytes of hex (SHA-256)",
				 cfg->fingerprint);
			goto fail;
		}
		c->pinned = true;
		/* the chain is not looked at: the certificate is checked whole
		 * once the handshake proved the device holds its key */
		SSL_CTX_set_verify(c->ctx, SSL_VERIFY_NONE, NULL);
	} else if (!cfg->ca_file) {
		snprintf(err, err_len, "TLS needs a CA file or the device's certificate fingerprint "
			 "to know the device");
		goto fail;
	} else if ((ret = load_ca(c->ctx, cfg->ca_file, err, err_len)) < 0) {
		goto fail;
	}
	*out = c;
	return 0;
fail:
	pl__tls_client_close(c);
	return ret;
}

void pl__tls_client_close(struct pl_tls_client *c)
{
	if (!c)
		return;
	SSL_CTX_free(c->ctx);
	free(c->server_name);
	free(c);
}

/* The connection's side of a failure that is not "wait". */
static int failure(struct tls_conn *t, int ssl_err, char *why, size_t why_len, const char *doing)
{
	char prefix[96];

	snprintf(prefix, sizeof(prefix), "TLS %s: ", doing);
	if (ssl_err == SSL_ERROR_SYSCALL || ssl_err == SSL_ERROR_ZERO_RETURN) {
		int e = errno;

		ERR_clear_error();
		snprintf(why, why_len, "%s%s", prefix,
			 ssl_err == SSL_ERROR_ZERO_RETURN || !e ? "the peer closed the connection"
								: strerror(e));
		return e ? -e : -ECONNRESET;
	}
	if (t->client && !t->client->pinned && SSL_get_verify_result(t->ssl) != X509_V_OK) {
		snprintf(why, why_len, "%sthe device's certificate does not verify against the CA: %s",
			 prefix, X509_verify_cert_error_string(SSL_get_verify_result(t->ssl)));
		ERR_clear_error();
		return -EPERM;
	}
	ssl_reason(why, why_len, prefix, "protocol error");
	return -EPROTO;
}

static bool waits(struct tls_conn *t, int ssl_err)
{
	if (ssl_err == SSL_ERROR_WANT_READ)
		t->base.wants = PL_CONN_WANT_READ;
	else if (ssl_err == SSL_ERROR_WANT_WRITE)
		t->base.wants = PL_CONN_WANT_WRITE;
	else
		return false;
	return true;
}

static int check_pinned(struct tls_conn *t, char *why, size_t why_len)
{
	uint8_t md[EVP_MAX_MD_SIZE] = { 0 };
	unsigned md_len = 0;
	X509 *peer = SSL_get1_peer_certificate(t->ssl);
	bool ok = peer && X509_digest(peer, EVP_sha256(), md, &md_len) &&
		  md_len == PL_TLS_FINGERPRINT_BYTES &&
		  CRYPTO_memcmp(md, t->client->fingerprint, PL_TLS_FINGERPRINT_BYTES) == 0;
	char hex[3 * PL_TLS_FINGERPRINT_BYTES] = "";

	X509_free(peer);
	ERR_clear_error();
	if (ok)
		return 1;
	for (unsigned i = 0; i < PL_TLS_FINGERPRINT_BYTES; i++)
		snprintf(hex + 3 * i, sizeof(hex) - 3 * i, "%02X%s", md[i],
			 i + 1 < PL_TLS_FINGERPRINT_BYTES ? ":" : "");
	snprintf(why, why_len, "TLS: the device's certificate is not the one pinned (its SHA-256 "
		 "fingerprint is %s)", hex);
	return -EPERM;
}

static int tls_handshake(struct pl_link_conn *c, char *why, size_t why_len)
{
	struct tls_conn *t = (struct tls_conn *)c;
	int r, e;

	ERR_clear_error();
	r = SSL_do_handshake(t->ssl);
	if (r == 1)
		return t->client && t->client->pinned ? check_pinned(t, why, why_len) : 1;
	e = SSL_get_error(t->ssl, r);
	if (waits(t, e))
		return 0;
	return failure(t, e, why, why_len, "handshake");
}

static ssize_t tls_recv(struct pl_link_conn *c, void *buf, size_t len)
{
	struct tls_conn *t = (struct tls_conn *)c;
	char why[8];
	int n, e;

	ERR_clear_error();
	n = SSL_read(t->ssl, buf, len > INT32_MAX ? INT32_MAX : (int)len);
	if (n > 0)
		return n;
	e = SSL_get_error(t->ssl, n);
	if (waits(t, e))
		return -EAGAIN;
	if (e == SSL_ERROR_ZERO_RETURN || (e == SSL_ERROR_SYSCALL && errno == 0)) {
		ERR_clear_error();
		return 0;
	}
	return failure(t, e, why, sizeof(why), "read");
}

/* Up to cap bytes of the pieces, from byte skip on, into out. */
static size_t gather(const struct iovec *iov, int iovcnt, size_t skip, uint8_t *out, size_t cap)
{
	size_t n = 0;

	for (int i = 0; i < iovcnt && n < cap; i++) {
		size_t len = iov[i].iov_len;

		if (skip >= len) {
			skip -= len;
			continue;
		}
		len -= skip;
		if (len > cap - n)
			len = cap - n;
		memcpy(out + n, (const uint8_t *)iov[i].iov_base + skip, len);
		n += len;
		skip = 0;
	}
	return n;
}

static ssize_t tls_sendv(struct pl_link_conn *c, const struct iovec *iov, int iovcnt)
{
	struct tls_conn *t = (struct tls_conn *)c;
	size_t done = 0, k;
	char why[8];

	while ((k = gather(iov, iovcnt, done, t->gather, sizeof(t->gather))) > 0) {
		int r, e;

		ERR_clear_error();
		r = SSL_write(t->ssl, t->gather, (int)k);
		if (r > 0) {
			done += (size_t)r;
			continue;
		}
		e = SSL_get_error(t->ssl, r);
		if (waits(t, e))
			return done ? (ssize_t)done : -EAGAIN;
		if (done)
			return (ssize_t)done; /* the failure shows again next time */
		return failure(t, e, why, sizeof(why), "write");
	}
	return (ssize_t)done;
}

static bool tls_pending(const struct pl_link_conn *c)
{
	return SSL_has_pending(((const struct tls_conn *)c)->ssl) == 1;
}

static void tls_shutdown(struct pl_link_conn *c)
{
	struct tls_conn *t = (struct tls_conn *)c;

	ERR_clear_error();
	SSL_shutdown(t->ssl); /* close_notify, if the socket takes it now */
	ERR_clear_error();
	shutdown(c->fd, SHUT_WR);
}

static void tls_free(struct pl_link_conn *c)
{
	struct tls_conn *t = (struct tls_conn *)c;

	SSL_free(t->ssl);
	close(c->fd);
	free(t);
}

static const struct pl_link_conn_ops tls_ops = {
	.name = "tls",
	.handshake = tls_handshake,
	.recv = tls_recv,
	.sendv = tls_sendv,
	.pending = tls_pending,
	.shutdown = tls_shutdown,
	.free = tls_free,
};

static struct pl_link_conn *new_conn(SSL_CTX *ctx, int fd, const struct pl_tls_client *client)
{
	struct tls_conn *t = calloc(1, sizeof(*t));

	if (!t || !(t->ssl = SSL_new(ctx)) || !SSL_set_fd(t->ssl, fd)) {
		if (t)
			SSL_free(t->ssl);
		free(t);
		close(fd);
		ERR_clear_error();
		return NULL;
	}
	t->base.ops = &tls_ops;
	t->base.fd = fd;
	t->client = client;
	return &t->base;
}

struct pl_link_conn *pl__tls_server_conn(struct pl_tls_server *s, int fd)
{
	struct pl_link_conn *c = new_conn(s->ctx, fd, NULL);

	if (c)
		SSL_set_accept_state(((struct tls_conn *)c)->ssl);
	return c;
}

struct pl_link_conn *pl__tls_client_conn(struct pl_tls_client *cl, int fd)
{
	struct pl_link_conn *c = new_conn(cl->ctx, fd, cl);
	SSL *ssl;
	unsigned char ip[16];

	if (!c)
		return NULL;
	ssl = ((struct tls_conn *)c)->ssl;
	SSL_set_connect_state(ssl);
	if (!cl->pinned && cl->server_name[0]) {
		/* the certificate must name what was connected to: an address
		 * as an IP entry, a name as a DNS one (and sent as SNI) */
		bool is_ip = inet_pton(AF_INET, cl->server_name, ip) == 1 ||
			     inet_pton(AF_INET6, cl->server_name, ip) == 1;

		if (is_ip ? !X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), cl->server_name)
			  : (!SSL_set1_host(ssl, cl->server_name) ||
			     !SSL_set_tlsext_host_name(ssl, cl->server_name))) {
			pl__conn_free(c);
			ERR_clear_error();
			return NULL;
		}
	}
	return c;
}
