/* The MAC of docs/wire.md "TCP authentication", written from the document
 * with OpenSSL directly (not common/auth/), for the tests that play a host:
 * HMAC-SHA256(key, label || Nd || Nh). */
#ifndef PL_TEST_DOC_AUTH_H
#define PL_TEST_DOC_AUTH_H

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline void doc_auth_mac(const uint8_t *key, size_t key_len, const char *label,
				const uint8_t nd[32], const uint8_t nh[32], uint8_t out[32])
{
	uint8_t msg[96];
	size_t l = strlen(label);
	unsigned len = 32;

	memcpy(msg, label, l);
	memcpy(msg + l, nd, 32);
	memcpy(msg + l + 32, nh, 32);
	HMAC(EVP_sha256(), key, (int)key_len, msg, l + 64, out, &len);
}

#endif
