/* The TCP link's authentication (docs/wire.md, "TCP authentication"): a
 * pre-shared key and an HMAC-SHA256 challenge-response in both directions,
 * made right after the connection and before any wire message.
 *
 *   device -> host   40 bytes  "PLAUTH01", Nd (32 random bytes)
 *   host -> device   72 bytes  "PLAUTH01", Nh (32 random bytes),
 *                              HMAC-SHA256(K, "perflink-host-auth" Nd Nh)
 *   device -> host   32 bytes  HMAC-SHA256(K, "perflink-device-auth" Nd Nh)
 *
 * Each side proves it holds K over both sides' fresh nonces, so neither a
 * recorded exchange nor one side's own proof reflected back is accepted.
 * It authenticates the two ends when they connect; it does not encrypt or
 * protect the bytes after it.
 *
 * The key is a file's bytes, exactly as they are (16 to 1024 of them). The
 * file must be a regular file, not a symbolic link, owned by the caller or
 * root, and not readable or writable by group or others.
 *
 * Both perflinkd and perflink-host use this; the HMAC is libcrypto's. Built
 * without libcrypto, pl__link_auth_available() is false and the MAC calls
 * return -ENOTSUP. */
#ifndef PL_COMMON_LINK_AUTH_H
#define PL_COMMON_LINK_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PL_AUTH_MAGIC "PLAUTH01"
#define PL_AUTH_MAGIC_BYTES 8
#define PL_AUTH_NONCE_BYTES 32
#define PL_AUTH_MAC_BYTES 32
#define PL_AUTH_CHALLENGE_BYTES (PL_AUTH_MAGIC_BYTES + PL_AUTH_NONCE_BYTES)                 /* 40 */
#define PL_AUTH_RESPONSE_BYTES (PL_AUTH_MAGIC_BYTES + PL_AUTH_NONCE_BYTES + PL_AUTH_MAC_BYTES) /* 72 */
#define PL_AUTH_PROOF_BYTES PL_AUTH_MAC_BYTES                                                /* 32 */
#define PL_AUTH_KEY_MIN_BYTES 16
#define PL_AUTH_KEY_MAX_BYTES 1024
/* The device gives a new connection this long to answer its challenge. */
#define PL_AUTH_TIMEOUT_MS 5000

enum pl_auth_role { PL_AUTH_HOST, PL_AUTH_DEVICE };

struct pl_link_key {
	uint8_t bytes[PL_AUTH_KEY_MAX_BYTES];
	size_t len;
};

bool pl__link_auth_available(void);

/* Read the key file with the checks above. 0, or -errno with the reason in
 * err (for the caller to say with the option's name). */
int pl__link_key_load(struct pl_link_key *key, const char *path, char *err, size_t err_len);
/* Forget the key's bytes (explicit_bzero). */
void pl__link_key_wipe(struct pl_link_key *key);

/* Fill a nonce from the system's random source. 0 or -errno. */
int pl__link_auth_nonce(uint8_t nonce[PL_AUTH_NONCE_BYTES]);
/* role's proof over both nonces. 0 or -ENOTSUP / -EIO. */
int pl__link_auth_mac(const struct pl_link_key *key, enum pl_auth_role role,
		      const uint8_t device_nonce[PL_AUTH_NONCE_BYTES],
		      const uint8_t host_nonce[PL_AUTH_NONCE_BYTES], uint8_t mac[PL_AUTH_MAC_BYTES]);
/* Does mac prove role's knowledge of key? Compared in constant time. */
bool pl__link_auth_check(const struct pl_link_key *key, enum pl_auth_role role,
			 const uint8_t device_nonce[PL_AUTH_NONCE_BYTES],
			 const uint8_t host_nonce[PL_AUTH_NONCE_BYTES],
			 const uint8_t mac[PL_AUTH_MAC_BYTES]);

/* The messages: build, and read what the other side sent. The read calls
 * return false when the magic is not there. */
void pl__link_auth_challenge(uint8_t out[PL_AUTH_CHALLENGE_BYTES],
			     const uint8_t device_nonce[PL_AUTH_NONCE_BYTES]);
bool pl__link_auth_read_challenge(const uint8_t in[PL_AUTH_CHALLENGE_BYTES],
				  uint8_t device_nonce[PL_AUTH_NONCE_BYTES]);
int pl__link_auth_response(uint8_t out[PL_AUTH_RESPONSE_BYTES], const struct pl_link_key *key,
			   const uint8_t device_nonce[PL_AUTH_NONCE_BYTES],
			   const uint8_t host_nonce[PL_AUTH_NONCE_BYTES]);
/* Checks the response's magic and MAC; on success host_nonce is its Nh. */
bool pl__link_auth_read_response(const uint8_t in[PL_AUTH_RESPONSE_BYTES],
				 const struct pl_link_key *key,
				 const uint8_t device_nonce[PL_AUTH_NONCE_BYTES],
				 uint8_t host_nonce[PL_AUTH_NONCE_BYTES]);

#endif
