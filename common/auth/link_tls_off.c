/* See link_tls.h: built without libssl, TLS is unavailable and says so. */
#include "link_tls.h"

#include <errno.h>
#include <stdio.h>
#include <unistd.h>

bool pl__link_tls_available(void)
{
	return false;
}

int pl__tls_server_open(struct pl_tls_server **out, const char *cert_file, const char *key_file,
			char *err, size_t err_len)
{
	(void)out;
	(void)cert_file;
	(void)key_file;
	snprintf(err, err_len, "built without libssl: no TLS");
	return -ENOTSUP;
}

void pl__tls_server_close(struct pl_tls_server *s)
{
	(void)s;
}

struct pl_link_conn *pl__tls_server_conn(struct pl_tls_server *s, int fd)
{
	(void)s;
	close(fd);
	return NULL;
}

int pl__tls_client_open(struct pl_tls_client **out, const struct pl_tls_client_config *cfg,
			char *err, size_t err_len)
{
	(void)out;
	(void)cfg;
	snprintf(err, err_len, "built without libssl: no TLS");
	return -ENOTSUP;
}

void pl__tls_client_close(struct pl_tls_client *c)
{
	(void)c;
}

struct pl_link_conn *pl__tls_client_conn(struct pl_tls_client *c, int fd)
{
	(void)c;
	close(fd);
	return NULL;
}

bool pl__tls_parse_fingerprint(const char *text, uint8_t out[PL_TLS_FINGERPRINT_BYTES])
{
	(void)text;
	(void)out;
	return false;
}
