// Triton kernels are embedded as comments in /work/wt/issue12/.cache/inductor/canbqlwqcd7sotaweckgwbbfede7pflsqk6hlhkam26jyejlmrf6/c4lktbrninejv7fqdpz7tjundqt6eaac2gms3ztwhjmqkxjgppis.wrapper.cpp

#include <torch/csrc/inductor/cpp_prefix.h>
extern "C"  void  cpp_fused__to_copy_ge_gt_index_mul_sub_unsqueeze_where_zeros_like_0(const int64_t* in_ptr0,
                       const float* in_ptr1,
                       const int64_t* in_ptr2,
                       float* out_ptr0,
                       const int64_t ks0,
                       const int64_t ks1)
{
    std::atomic<int> inductor_cpu_integer_div_error{0};
    inductor_cpu_integer_div_error_flag = &inductor_cpu_integer_div_error;
    {
        #pragma GCC ivdep
        for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(ks0); x0+=static_cast<int64_t>(1L))
        {
            for(int64_t x1=static_cast<int64_t>(0L); x1<static_cast<int64_t>(4L); x1+=static_cast<int64_t>(16L))
            {
                {
                    if(C10_LIKELY(x1 >= static_cast<int64_t>(0L) && x1 < static_cast<int64_t>(4L)))
                    {
                        auto tmp0 = in_ptr0[static_cast<int64_t>(x0)];
                        auto tmp15 = in_ptr2[static_cast<int64_t>(x0)];
                        auto tmp1 = static_cast<int64_t>(1);
                        auto tmp2 = int64_t(tmp0 - tmp1);
                        auto tmp3 = static_cast<int64_t>(0);
                        auto tmp4 = tmp2 >= tmp3;
                        auto tmp5 = tmp4 ? tmp2 : tmp3;
                        auto tmp6 = ks1;
                        auto tmp7 = c10::convert<int64_t>(tmp6);
                        auto tmp8 = int64_t(tmp5 + tmp7);
                        auto tmp9 = tmp5 < 0;
                        auto tmp10 = tmp9 ? tmp8 : tmp5;
                        auto tmp11 = tmp10;
                        auto tmp12 = c10::convert<int64_t>(tmp11);
                        AOTI_TORCH_CHECK((0 <= tmp12) & (tmp12 < ks1), "index out of bounds: 0 <= tmp12 < ks1");
                        auto tmp14 = at::vec::Vectorized<float>::loadu(in_ptr1 + static_cast<int64_t>(x1 + 4L*tmp10), static_cast<int64_t>(4L));
                        auto tmp16 = tmp15 > tmp3;
                        auto tmp17 = c10::convert<float>(tmp16);
                        auto tmp18 = at::vec::Vectorized<float>(tmp17);
                        auto tmp19 = tmp14 * tmp18;
                        tmp19.store(out_ptr0 + static_cast<int64_t>(x1 + 4L*x0), static_cast<int64_t>(4L));
                    }
                }
            }
        }
    }
    inductor_cpu_integer_div_error_flag = nullptr;
    inductor_cpu_throw_if_integer_div_error(inductor_cpu_integer_div_error);
}

// Compile cmd
// g++ /work/wt/issue12/.cache/inductor/canbqlwqcd7sotaweckgwbbfede7pflsqk6hlhkam26jyejlmrf6/cjnu3po5y3e3bdphuq6gsjpmu343bhwvm6lljzxtn5fur6kibpb6.kernel.cpp -D TORCH_INDUCTOR_CPP_WRAPPER -D STANDALONE_TORCH_HEADER -D TORCH_INDUCTOR_PRECOMPILE_HEADERS -D  C10_USING_CUSTOM_GENERATED_MACROS -D CPU_CAPABILITY_AVX512  -O3 -DNDEBUG -fno-omit-frame-pointer -g1 -fno-trapping-math -funsafe-math-optimizations -ffinite-math-only -fno-signed-zeros -fno-finite-math-only -fno-unsafe-math-optimizations -fmath-errno -ffp-contract=off -fexcess-precision=fast -fno-tree-loop-vectorize -march=native -fPIC -Wall -std=c++20 -Wno-unused-variable -Wno-unknown-pragmas -pedantic -fopenmp  -include /tmp/torchinductor_root/precompiled_headers/cnsoq7i5jnrwddemejvmkouc5647kgg4pbd6q4rmidx4xmnwzsbh.h -I/root/.pyenv/versions/3.11.7/include/python3.11 -I/work/wt/issue12/.venv/lib/python3.11/site-packages/torch/include -I/work/wt/issue12/.venv/lib/python3.11/site-packages/torch/include/torch/csrc/api/include   -mavx512f -mavx512dq -mavx512vl -mavx512bw -mfma -mavx512vnni -mavx512vl -mamx-tile -mamx-bf16 -mamx-int8 -mavx512bf16  -c -o /work/wt/issue12/.cache/inductor/canbqlwqcd7sotaweckgwbbfede7pflsqk6hlhkam26jyejlmrf6/cjnu3po5y3e3bdphuq6gsjpmu343bhwvm6lljzxtn5fur6kibpb6.kernel.o
// Link cmd
// g++ /work/wt/issue12/.cache/inductor/canbqlwqcd7sotaweckgwbbfede7pflsqk6hlhkam26jyejlmrf6/c4lktbrninejv7fqdpz7tjundqt6eaac2gms3ztwhjmqkxjgppis.wrapper.o /work/wt/issue12/.cache/inductor/canbqlwqcd7sotaweckgwbbfede7pflsqk6hlhkam26jyejlmrf6/cjnu3po5y3e3bdphuq6gsjpmu343bhwvm6lljzxtn5fur6kibpb6.kernel.o /work/wt/issue12/.cache/inductor/canbqlwqcd7sotaweckgwbbfede7pflsqk6hlhkam26jyejlmrf6/c4lktbrninejv7fqdpz7tjundqt6eaac2gms3ztwhjmqkxjgppis/cgxre62qccm2hvjt32u3oobekucw5zks6ukxlzod6km7a4telymf.weights.o -D TORCH_INDUCTOR_CPP_WRAPPER -D STANDALONE_TORCH_HEADER -D TORCH_INDUCTOR_PRECOMPILE_HEADERS -D  C10_USING_CUSTOM_GENERATED_MACROS -D CPU_CAPABILITY_AVX512  -O3 -DNDEBUG -fno-omit-frame-pointer -g1 -fno-trapping-math -funsafe-math-optimizations -ffinite-math-only -fno-signed-zeros -fno-finite-math-only -fno-unsafe-math-optimizations -fmath-errno -ffp-contract=off -fexcess-precision=fast -fno-tree-loop-vectorize -march=native -shared -fPIC -Wall -std=c++20 -Wno-unused-variable -Wno-unknown-pragmas -pedantic -fopenmp  -I/root/.pyenv/versions/3.11.7/include/python3.11 -I/work/wt/issue12/.venv/lib/python3.11/site-packages/torch/include -I/work/wt/issue12/.venv/lib/python3.11/site-packages/torch/include/torch/csrc/api/include   -mavx512f -mavx512dq -mavx512vl -mavx512bw -mfma -mavx512vnni -mavx512vl -mamx-tile -mamx-bf16 -mamx-int8 -mavx512bf16  -o /work/wt/issue12/.cache/inductor/canbqlwqcd7sotaweckgwbbfede7pflsqk6hlhkam26jyejlmrf6/c4lktbrninejv7fqdpz7tjundqt6eaac2gms3ztwhjmqkxjgppis.wrapper.so  -ltorch -ltorch_cpu -lgomp  -L/root/.pyenv/versions/3.11.7/lib -L/work/wt/issue12/.venv/lib/python3.11/site-packages/torch/lib 
