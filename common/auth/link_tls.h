/* TLS for the TCP link (docs/wire.md, "TLS"), through OpenSSL's libssl:
 * TLS 1.3 only, the device the server with a certificate, the host a client
 * that checks it against a CA (chain and name) or a pinned SHA-256
 * fingerprint. The pre-shared key's handshake (link_auth.h) still runs,
 * inside TLS, so that the key, not the certificate, decides who is the
 * host: TLS adds secrecy and integrity for the whole stream.
 *
 * The files go through guarded_file.h (the private key as a secret, the
 * certificate and the CA as files nobody else may write) and are parsed
 * from memory. Built without libssl, pl__link_tls_available() is false and
 * the opens return -ENOTSUP. */
#ifndef PL_COMMON_LINK_TLS_H
#define PL_COMMON_LINK_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "link_conn.h"

#define PL_TLS_FINGERPRINT_BYTES 32 /* SHA-256 of the certificate (DER) */

struct pl_tls_server;
struct pl_tls_client;

struct pl_tls_client_config {
	const char *ca_file;     /* verify the chain against it, and the name */
	const char *server_name; /* the name or address connected to */
	/* or, instead of a CA: the certificate's SHA-256, as `openssl x509
	 * -fingerprint -sha256` prints it (colons and case as you like) */
	const char *fingerprint;
};

bool pl__link_tls_available(void);

/* 0 or -errno with the reason in err. */
int pl__tls_server_open(struct pl_tls_server **out, const char *cert_file, const char *key_file,
			char *err, size_t err_len);
void pl__tls_server_close(struct pl_tls_server *s); /* NULL is fine */
/* The server's side of a just-accepted fd (owned from here); the TLS
 * handshake runs in pl__conn_handshake. NULL when out of memory (fd
 * closed). */
struct pl_link_conn *pl__tls_server_conn(struct pl_tls_server *s, int fd);

int pl__tls_client_open(struct pl_tls_client **out, const struct pl_tls_client_config *cfg,
			char *err, size_t err_len);
void pl__tls_client_close(struct pl_tls_client *c);
struct pl_link_conn *pl__tls_client_conn(struct pl_tls_client *c, int fd);

/* "ab:cd:..." or "abcd..." (64 hex digits) into out. false when not. */
bool pl__tls_parse_fingerprint(const char *text, uint8_t out[PL_TLS_FINGERPRINT_BYTES]);

#endif
