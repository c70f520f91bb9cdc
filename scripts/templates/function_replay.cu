// Host side of scripts/gpu_function_replay.py: runs the jobs a `generate` step wrote.
//     nvcc -O2 -o replay function_replay.cu && ./replay DIR
// DIR/jobs.tsv: one job a line, tab-separated: module, kernel, count, argument bytes per
// call, result bytes per call, argument file, result file (all names relative to DIR).
// Each module is loaded through the runtime's library API (cudaLibraryLoadData: the driver
// JITs it for the device present, and nothing links against libcuda);
// a kernel's thread i reads its arguments at args + i*argument_bytes and writes its result
// at results + i*result_bytes. Writes DIR/gpu.txt (the device's name). Exit 2 on any error.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#define CHECK(call) do { cudaError_t r_ = (call); if (r_ != cudaSuccess) { \
    fprintf(stderr, "CUDA error %s at %s:%d: %s\n", #call, __FILE__, __LINE__, \
            cudaGetErrorString(r_)); exit(2); } } while (0)

static std::string slurp(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) { fprintf(stderr, "cannot read %s\n", path.c_str()); exit(2); }
    std::ostringstream s; s << f.rdbuf(); return s.str();
}

int main(int argc, char** argv) {
    if (argc != 2) { fprintf(stderr, "usage: %s DIR\n", argv[0]); return 2; }
    std::string dir = std::string(argv[1]) + "/";
    cudaDeviceProp prop; CHECK(cudaGetDeviceProperties(&prop, 0));
    std::ifstream jobs(dir + "jobs.tsv");
    std::string line, loaded_name;
    cudaLibrary_t module = nullptr;
    int done = 0;
    while (std::getline(jobs, line)) {
        std::istringstream f(line);
        std::string mod, kernel, in_file, out_file;
        unsigned count, in_bytes, out_bytes;
        if (!(f >> mod >> kernel >> count >> in_bytes >> out_bytes >> in_file >> out_file)) {
            fprintf(stderr, "jobs.tsv: bad line: %s\n", line.c_str()); return 2;
        }
        if (mod != loaded_name) {
            if (module) CHECK(cudaLibraryUnload(module));
            std::string ptx = slurp(dir + mod);
            if (cudaLibraryLoadData(&module, ptx.c_str(), nullptr, nullptr, 0, nullptr, nullptr,
                                    0) != cudaSuccess) {
                fprintf(stderr, "%s: the JIT rejects it: %s\n", mod.c_str(),
                        cudaGetErrorString(cudaGetLastError()));
                return 2;
            }
            loaded_name = mod;
        }
        cudaKernel_t fn; CHECK(cudaLibraryGetKernel(&fn, module, kernel.c_str()));
        std::string args = slurp(dir + in_file);
        if (args.size() != (size_t)count * in_bytes) {
            fprintf(stderr, "%s: %zu bytes, expected %u\n", in_file.c_str(), args.size(),
                    count * in_bytes);
            return 2;
        }
        void *din, *dout;
        CHECK(cudaMalloc(&din, args.size() + 1));
        CHECK(cudaMalloc(&dout, (size_t)count * out_bytes + 1));
        CHECK(cudaMemcpy(din, args.data(), args.size(), cudaMemcpyHostToDevice));
        CHECK(cudaMemset(dout, 0, (size_t)count * out_bytes));
        void* params[] = {&din, &dout, &count};
        CHECK(cudaLaunchKernel((const void*)fn, dim3((count + 127) / 128), dim3(128), params, 0,
                               nullptr));
        CHECK(cudaDeviceSynchronize());
        std::vector<char> results((size_t)count * out_bytes);
        CHECK(cudaMemcpy(results.data(), dout, results.size(), cudaMemcpyDeviceToHost));
        std::ofstream(dir + out_file, std::ios::binary).write(results.data(), results.size());
        CHECK(cudaFree(din)); CHECK(cudaFree(dout));
        done += count;
    }
    std::ofstream(dir + "gpu.txt") << prop.name << "\n";
    printf("%d calls on %s\n", done, prop.name);
    return 0;
}
