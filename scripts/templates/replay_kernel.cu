// kernel ${i}: ${comment}
__global__ void k${i}(${params}) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
${declarations}    asm volatile(
${asm}
        : ${asm_outputs}
        : ${asm_inputs});
${stores}}

static void launch${i}(int n, void** din, void** dout) {
    (void)din; (void)dout;
    k${i}<<<(n + 127) / 128, 128>>>(${arguments});
}

static const Reg k${i}_in[] = {${inputs}};
static const Reg k${i}_out[] = {${outputs}};
static const unsigned long long k${i}_in_vals[] = {${input_values}};
static const unsigned long long k${i}_exp_vals[] = {${expected_values}};
static const unsigned char k${i}_exp_mask[] = {${expected_mask}};
static const VecInfo k${i}_info[] = {
${vectors}
};
// ${input_count} inputs, ${output_count} outputs, ${vector_count} vectors

