// Experiment of session 6 (docs/GPU-RESULTS.md): acc's own Jacobi kernels, loaded from the PTX
// that `acc --emit ptx` writes, launched with raw driver calls in several host patterns and
// beside other copy kernels, to tell the kernels' share of the gap to nvcc from the runtime's.
//
//   acc bench/gpu/acc/jacobi.acc --emit ptx > j.ptx     (on any machine)
//   nvcc -O3 -arch=sm_90 -o jh bench/gpu/cuda/jacobi_acc_kernels.cu -lcuda && ./jh j.ptx
//
// The parameters follow jit-ptx's kernel ABI for this program's two regions as compiled at
// e1811be (the stencil: err, n, m, Anew, A, results, partials, error, out, then each array's
// data pointer and extents; the copy likewise without err). A split copy kernel (c673e1e and
// later) also takes `split`: regenerate the PTX and adjust `pc` before reusing this.
#include <cuda.h>
#include <cuda_runtime.h>
#include <chrono>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <vector>
#include <string>
#include <fstream>
#include <sstream>
#define CK(x) do{auto e=(x); if(e){printf("err %d at %d\n",(int)e,__LINE__); exit(1);}}while(0)
__device__ double block_max(double e){for(int o=16;o;o>>=1)e=fmax(e,__shfl_xor_sync(~0u,e,o));__shared__ double s[32];int w=(threadIdx.y*blockDim.x+threadIdx.x)/32,l=(threadIdx.y*blockDim.x+threadIdx.x)%32;if(!l)s[w]=e;__syncthreads();int nw=blockDim.x*blockDim.y/32;e=(w==0&&l<nw)?s[l]:0;if(w==0)for(int o=16;o;o>>=1)e=fmax(e,__shfl_xor_sync(~0u,e,o));return e;}
__global__ void st(int n,int m,const double*__restrict__ A,double*__restrict__ An,unsigned long long*err){int i=blockIdx.x*blockDim.x+threadIdx.x+1,j=blockIdx.y*blockDim.y+threadIdx.y+1;double e=0;if(i<m-1&&j<n-1){size_t k=(size_t)j*m+i;double v=0.25*(A[k+1]+A[k-1]+A[k-m]+A[k+m]);An[k]=v;e=fabs(v-A[k]);}e=block_max(e);if(threadIdx.x==0&&threadIdx.y==0&&e>0)atomicMax(err,(unsigned long long)__double_as_longlong(e));}
__global__ void cp(int n,int m,const double*__restrict__ An,double*__restrict__ A){int i=blockIdx.x*blockDim.x+threadIdx.x+1,j=blockIdx.y*blockDim.y+threadIdx.y+1;if(i<m-1&&j<n-1){size_t k=(size_t)j*m+i;A[k]=An[k];}}
__global__ void init(int64_t N,int m,double*A,double*B){for(int64_t k=blockIdx.x*(int64_t)blockDim.x+threadIdx.x;k<N;k+=(int64_t)gridDim.x*blockDim.x){double v=k<m?1.0:0.0;A[k]=v;B[k]=v;}}
__global__ void csplit(int n,int m,int S,const double*__restrict__ An,double*__restrict__ A){unsigned g0=blockIdx.x/S, part=blockIdx.x%S, G=gridDim.x/S; int64_t rows=n-2, W=m-2;
 for(int64_t g=g0; g<rows; g+=G){int64_t j=1+g; for(int64_t v=part*(int64_t)blockDim.x+threadIdx.x; v<W; v+=(int64_t)S*blockDim.x){int64_t i=1+v; A[j*m+i]=An[j*m+i];}}}
__global__ void csplit2(int n,int m,int S,const double*__restrict__ An,double*__restrict__ A){unsigned g0=blockIdx.y, part=blockIdx.x; int64_t rows=n-2, W=m-2;
 for(int64_t g=g0; g<rows; g+=gridDim.y){int64_t j=1+g; for(int64_t v=part*(int64_t)blockDim.x+threadIdx.x; v<W; v+=(int64_t)S*blockDim.x){int64_t i=1+v; A[j*m+i]=An[j*m+i];}}}
int main(int argc,char**argv){
 int n=4096,m=4096,iters=1000; int gs=argc>2?atoi(argv[2]):1188, gc=argc>3?atoi(argv[3]):1584;
 cudaFree(0);
 std::ifstream f(argv[1]); std::stringstream ss; ss<<f.rdbuf(); std::string ptx=ss.str();
 CUmodule mod; CK(cuModuleLoadData(&mod,ptx.c_str())); CUfunction fs,fc; CK(cuModuleGetFunction(&fs,mod,"acc_region_0")); CK(cuModuleGetFunction(&fc,mod,"acc_region_1"));
 double *A,*An; size_t N=(size_t)n*m; cudaMalloc(&A,N*8); cudaMalloc(&An,N*8);
 void* errrec; cudaMalloc(&errrec,4096); cudaMemset(errrec,0,4096);
 void* hdr; cudaMalloc(&hdr,4096); cudaMemset(hdr,0,4096);
 double* pin; CK(cudaHostAlloc(&pin,1<<20,cudaHostAllocMapped)); double* pindev; cudaHostGetDevicePointer(&pindev,pin,0);
 unsigned long long *derr,*herr; cudaMalloc(&derr,8); cudaMallocHost(&herr,8);
 cudaStream_t s; cudaStreamCreateWithFlags(&s,cudaStreamNonBlocking);
 auto reset=[&]{init<<<1024,256,0,s>>>(N,m,A,An);cudaStreamSynchronize(s);};
 uint64_t nn=n,mm=m,z=0; uint64_t hdrA=(uint64_t)hdr,hdrN=(uint64_t)hdr+1024; uint64_t Ad=(uint64_t)A,And=(uint64_t)An;
 uint64_t res=(uint64_t)pindev, part=(uint64_t)pindev+5*8, er=(uint64_t)errrec, out=0; uint64_t e0=0;
 // stencil: err, n, m, Anew, A, results, partials, error, out, p3_data,d0,d1, p4_data,d0,d1
 void* ps[]={&e0,&nn,&mm,&hdrN,&hdrA,&res,&part,&er,&out,&And,&nn,&mm,&Ad,&nn,&mm};
 uint64_t part0=0;
 // copy: n, m, A, Anew, results, partials, error, out, p2_data,d0,d1, p3_data,d0,d1
 void* pc[]={&nn,&mm,&hdrA,&hdrN,&z,&part0,&er,&out,&Ad,&nn,&mm,&And,&nn,&mm};
 auto combine=[&]{double v=0;for(int b=0;b<gs;b++)v=fmax(v,pin[5+b]);return v;};
 auto launchS=[&]{pin[0]=0; CK(cuLaunchKernel(fs,gs,1,1,128,1,1,8*129,s,ps,0));};
 auto launchC=[&]{CK(cuLaunchKernel(fc,gc,1,1,128,1,1,0,s,pc,0));};
 dim3 b2(64,4),g2((m-2+63)/64,(n-2+3)/4);
 auto T=[&](const char*name,auto body){double best=1e9,err=0;for(int r=0;r<3;r++){reset();auto t0=std::chrono::steady_clock::now();for(int it=0;it<iters;it++)err=body();cudaStreamSynchronize(s);double t=std::chrono::duration<double,std::milli>(std::chrono::steady_clock::now()-t0).count();if(r&&t<best)best=t;}printf("%-40s %8.2f ms err %.6e\n",name,best,err);};
 for(int round=0;round<2;round++){
 T("nvcc kernels, queue both + memcpy",[&]{cudaMemsetAsync(derr,0,8,s);st<<<g2,b2,0,s>>>(n,m,A,An,derr);cp<<<g2,b2,0,s>>>(n,m,An,A);cudaMemcpyAsync(herr,derr,8,cudaMemcpyDeviceToHost,s);cudaStreamSynchronize(s);double e;memcpy(&e,herr,8);return e;});
 T("acc kernels, queue both + sync",[&]{launchS();launchC();cudaStreamSynchronize(s);return combine();});
 T("acc stencil + nvcc copy",[&]{launchS();cp<<<g2,b2,0,s>>>(n,m,An,A);cudaStreamSynchronize(s);return combine();});
 for(int S: {32,16,8,4}) for(int G: {4094, 1024, 256}){ if((int64_t)S*G>200000) continue; char nm[64]; sprintf(nm,"acc stencil + split S%d G%d",S,G);
  T(nm,[&]{launchS();csplit<<<S*G,128,0,s>>>(n,m,S,An,A);cudaStreamSynchronize(s);return combine();});}
 for(int S: {32,8}){ char nm[64]; sprintf(nm,"acc stencil + split2d S%d",S); dim3 g(S,4094);
  T(nm,[&]{launchS();csplit2<<<g,128,0,s>>>(n,m,S,An,A);cudaStreamSynchronize(s);return combine();});}
 }
 printf("%s\n",cudaGetErrorString(cudaGetLastError()));
}
