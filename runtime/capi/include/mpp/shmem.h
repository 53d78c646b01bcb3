/* The path programs written for SGI's SHMEM and early OpenSHMEM include: <mpp/shmem.h>.
 * It is <shmem.h>, which the generator writes (runtime/capi/src/header); this file is not
 * generated and has nothing of its own. */
#include "../shmem.h"
