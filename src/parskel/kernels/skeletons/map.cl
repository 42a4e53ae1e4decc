/* Map, Zip, MapArray and Generate: one work-item per output element.
 * The glue defines PS_INPUT_PARAMS (one __global pointer per input), PS_OUT_PARAM, PS_STORE,
 * PS_EXTRA_PARAMS and PS_ELEMENT, the user call on element ps_i (row ps_row, column ps_col). */
#include "common/parskel.h"

__kernel void ps_map(PS_INPUT_PARAMS PS_OUT_PARAM uint ps_n, uint ps_cols PS_EXTRA_PARAMS)
{
    uint ps_i = get_global_id(0);
    if (ps_i < ps_n) {
        uint ps_row = ps_i / ps_cols;
        uint ps_col = ps_i - ps_row * ps_cols;
        PS_STORE(PS_ELEMENT);
    }
}
