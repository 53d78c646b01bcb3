/* The C API's long double arithmetic (the reductions' sum, prod, max and min), compiled by
 * build.rs: Rust has no long double, so the arithmetic is C's own, on the platform's format.
 * max and min let a number win over a NaN, as the runtime's float reductions do. */
#include <math.h>

void rshmem_capi_long_double_sum(const long double *a, const long double *b, long double *out) {
    *out = *a + *b;
}

void rshmem_capi_long_double_prod(const long double *a, const long double *b, long double *out) {
    *out = *a * *b;
}

void rshmem_capi_long_double_max(const long double *a, const long double *b, long double *out) {
    *out = isnan(*a) ? *b : isnan(*b) ? *a : (*a > *b ? *a : *b);
}

void rshmem_capi_long_double_min(const long double *a, const long double *b, long double *out) {
    *out = isnan(*a) ? *b : isnan(*b) ? *a : (*a < *b ? *a : *b);
}

/* Conversions for the tests, which build long doubles from doubles and read them back. */
void rshmem_capi_long_double_from_double(double value, long double *out) {
    *out = (long double)value;
}

double rshmem_capi_long_double_to_double(const long double *value) {
    return (double)*value;
}
