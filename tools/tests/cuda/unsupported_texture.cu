// A texture fetch is refused by the sim's headers at the use, naming the construct.
// error: rshmem sim: textures is not emulated
__global__ void k(cudaTextureObject_t t, float *out) { out[0] = tex1Dfetch<float>(t, 0); }

int main() {
    k<<<1, 1>>>(0, 0);
    return 0;
}
