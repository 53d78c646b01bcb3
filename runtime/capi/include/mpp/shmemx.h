/* The path programs written for SGI's SHMEM and early OpenSHMEM include: <mpp/shmemx.h>.
 * It is <shmemx.h>, which the generator writes (runtime/capi/src/header); this file is not
 * generated and has nothing of its own. */
#include "../shmemx.h"
