/* See link_auth.h: the handshake's messages and MACs. */
#include "link_auth.h"
#include "pl_config.h"

#include <errno.h>
#include <string.h>
#include <sys/random.h>

#if HAVE_LIBCRYPTO
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#endif

#if HAVE_LIBCRYPTO
/* What each side's MAC covers after its label: Nd then Nh. The labels
 * differ so that one side's proof is never the other's. */
static const char *const role_label[] = {
	[PL_AUTH_HOST] = "perflink-host-auth",
	[PL_AUTH_DEVICE] = "perflink-device-auth",
};
#endif

bool pl__link_auth_available(void)
{
	return HAVE_LIBCRYPTO;
}

int pl__link_auth_nonce(uint8_t nonce[PL_AUTH_NONCE_BYTES])
{
	size_t got = 0;

	while (got < PL_AUTH_NONCE_BYTES) {
		ssize_t n = getrandom(nonce + got, PL_AUTH_NONCE_BYTES - got, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		got += (size_t)n;
	}
	return 0;
}

int pl__link_auth_mac(const struct pl_link_key *key, enum pl_auth_role role,
		      const uint8_t device_nonce[PL_AUTH_NONCE_BYTES],
		      const uint8_t host_nonce[PL_AUTH_NONCE_BYTES], uint8_t mac[PL_AUTH_MAC_BYTES])
{
#if HAVE_LIBCRYPTO
	uint8_t msg[32 + 2 * PL_AUTH_NONCE_BYTES];
	size_t label = strlen(role_label[role]);
	unsigned len = 0;

	memcpy(msg, role_label[role], label);
	memcpy(msg + label, device_nonce, PL_AUTH_NONCE_BYTES);
	memcpy(msg + label + PL_AUTH_NONCE_BYTES, host_nonce, PL_AUTH_NONCE_BYTES);
	if (!HMAC(EVP_sha256(), key->bytes, (int)key->len, msg, label + 2 * PL_AUTH_NONCE_BYTES,
		  mac, &len) ||
	    len != PL_AUTH_MAC_BYTES)
		return -EIO;
	return 0;
#else
	(void)key, (void)role, (void)device_nonce, (void)host_nonce, (void)mac;
	return -ENOTSUP;
#endif
}

bool pl__link_auth_check(const struct pl_link_key *key, enum pl_auth_role role,
			 const uint8_t device_nonce[PL_AUTH_NONCE_BYTES],
			 const uint8_t host_nonce[PL_AUTH_NONCE_BYTES],
			 const uint8_t mac[PL_AUTH_MAC_BYTES])
{
#if HAVE_LIBCRYPTO
	uint8_t want[PL_AUTH_MAC_BYTES];
	bool ok = pl__link_auth_mac(key, role, device_nonce, host_nonce, want) == 0 &&
		  CRYPTO_memcmp(want, mac, PL_AUTH_MAC_BYTES) == 0;

	OPENSSL_cleanse(want, sizeof(want));
	return ok;
#else
	(void)key, (void)role, (void)device_nonce, (void)host_nonce, (void)mac;
	return false;
#endif
}

void pl__link_auth_challenge(uint8_t out[PL_AUTH_CHALLENGE_BYTES],
			     const uint8_t device_nonce[PL_AUTH_NONCE_BYTES])
{
	memcpy(out, PL_AUTH_MAGIC, PL_AUTH_MAGIC_BYTES);
	memcpy(out + PL_AUTH_MAGIC_BYTES, device_nonce, PL_AUTH_NONCE_BYTES);
}

bool pl__link_auth_read_challenge(const uint8_t in[PL_AUTH_CHALLENGE_BYTES],
				  uint8_t device_nonce[PL_AUTH_NONCE_BYTES])
{
	if (memcmp(in, PL_AUTH_MAGIC, PL_AUTH_MAGIC_BYTES) != 0)
		return false;
	memcpy(device_nonce, in + PL_AUTH_MAGIC_BYTES, PL_AUTH_NONCE_BYTES);
	return true;
}

int pl__link_auth_response(uint8_t out[PL_AUTH_RESPONSE_BYTES], const struct pl_link_key *key,
			   const uint8_t device_nonce[PL_AUTH_NONCE_BYTES],
			   const uint8_t host_nonce[PL_AUTH_NONCE_BYTES])
{
	memcpy(out, PL_AUTH_MAGIC, PL_AUTH_MAGIC_BYTES);
	memcpy(out + PL_AUTH_MAGIC_BYTES, host_nonce, PL_AUTH_NONCE_BYTES);
	return pl__link_auth_mac(key, PL_AUTH_HOST, device_nonce, host_nonce,
				 out + PL_AUTH_MAGIC_BYTES + PL_AUTH_NONCE_BYTES);
}

bool pl__link_auth_read_response(const uint8_t in[PL_AUTH_RESPONSE_BYTES],
				 const struct pl_link_key *key,
				 const uint8_t device_nonce[PL_AUTH_NONCE_BYTES],
				 uint8_t host_nonce[PL_AUTH_NONCE_BYTES])
{
	if (memcmp(in, PL_AUTH_MAGIC, PL_AUTH_MAGIC_BYTES) != 0)
		return false;
	memcpy(host_nonce, in + PL_AUTH_MAGIC_BYTES, PL_AUTH_NONCE_BYTES);
	return pl__link_auth_check(key, PL_AUTH_HOST, device_nonce, host_nonce,
				   in + PL_AUTH_MAGIC_BYTES + PL_AUTH_NONCE_BYTES);
}
