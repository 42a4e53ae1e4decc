/* The neutral element given as C source (PS_IDENTITY_EXPR) is evaluated once into a buffer, so
 * every kernel reads it the same way as a neutral element given as a value. It initialises a
 * variable, so a brace list works for structs in C and in CUDA's C++ alike. */
#ifdef PS_IDENTITY_EXPR
__kernel void ps_identity(__global PS_T *out)
{
    PS_T ps_value = PS_IDENTITY_EXPR;
    *out = ps_value;
}
#endif
