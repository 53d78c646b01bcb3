// Inline PTX the emulator does not model is refused with its file and line.
// error: unsupported_ptx.cu:7: inline PTX `mbarrier.init.shared.b64 [$0], $1`
// error: is not emulated
__global__ void k(unsigned long long *bar) {
    unsigned addr = (unsigned)(unsigned long long)bar;
    // The line above the asm statement is line 6.
    asm volatile("mbarrier.init.shared.b64 [%0], %1;" ::"r"(addr), "r"(32));
}

int main() {
    k<<<1, 1>>>(0);
    return 0;
}
