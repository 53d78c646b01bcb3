/* autoconf_probe: the program autoconf-style projects compile and run with CC=oshcc to decide
 * whether an OpenSHMEM library works. A static symmetric long must work from this very first
 * check, before any heap is used. Kept exactly as such projects write it. */
#include <shmem.h>
long data;
int main(void){shmem_init(); shmem_long_p(&data,0,0); shmem_finalize(); return 0;}
