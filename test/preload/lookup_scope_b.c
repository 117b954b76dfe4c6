/* liblookupb.so: liblookupa.so's dependency (test/preload/lookup_scope_a.c). */
__attribute__((visibility("default"))) int lookup_b_value(void);

int lookup_b_value(void)
{
	return 42;
}
