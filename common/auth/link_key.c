/* See link_auth.h: loading the pre-shared key. */
#include "link_auth.h"
#include "guarded_file.h"

#include <string.h>

int pl__link_key_load(struct pl_link_key *key, const char *path, char *err, size_t err_len)
{
	return pl__guarded_file_read(path, true, PL_AUTH_KEY_MIN_BYTES, key->bytes,
				     sizeof(key->bytes), &key->len, err, err_len);
}

void pl__link_key_wipe(struct pl_link_key *key)
{
	explicit_bzero(key->bytes, sizeof(key->bytes));
	key->len = 0;
}
