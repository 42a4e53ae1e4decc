/* A kernel that does nothing: its time is the cost of a launch. */
__kernel void empty(void)
{
}
