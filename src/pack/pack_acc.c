/* pack_acc.c - (being written) part of the pack engine, see pack.h. */
#include "pack/pack.h"
