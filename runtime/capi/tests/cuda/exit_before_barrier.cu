// PE 3 finds its input invalid and exits with status 1 from a helper that holds a
// std::string, while the other PEs go on to a barrier that waits for every PE: PE 3 never
// arrives, so none of them passes it.
#include <nvshmem.h>

#include <cstdlib>
#include <iostream>
#include <string>

void check_input(int me, int value) {
    std::string name = "input of PE " + std::to_string(me);
    if (value < 0) {
        std::cerr << name << " is negative (" << value << "), giving up" << std::endl;
        exit(1);
    }
}

int main() {
    nvshmem_init();
    int me = nvshmem_my_pe();
    int value = me == 3 ? -1 : me * 10;
    check_input(me, value);
    std::cout << "PE " << me << ": waiting for every PE" << std::endl;
    nvshmem_barrier_all();
    std::cout << "PE " << me << ": passed the barrier" << std::endl;
    nvshmem_finalize();
    return 0;
}
