/* The neutral element given as C source (PS_IDENTITY_EXPR) is evaluated once into a buffer, so
 * every kernel reads it the same way as a neutral element given as a value. */
#ifdef PS_IDENTITY_EXPR
__kernel void ps_identity(__global PS_T *out)
{
    *out = PS_IDENTITY_EXPR;
}
#endif
