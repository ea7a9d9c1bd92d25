// Experiment of session 4 (docs/GPU-RESULTS.md): saxpy one element per iteration, unrolled by 2
// and 4 with the loads first, and float4, to see what a thread needs in flight on an H200.
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdint>
__global__ void fill(int64_t n, float v, float* x){for(int64_t i=blockIdx.x*(int64_t)blockDim.x+threadIdx.x;i<n;i+=(int64_t)gridDim.x*blockDim.x)x[i]=v;}
// like acc: no restrict, scalar, grid-stride
__global__ void s1(int64_t n, float a, const float* x, float* y){
  for(uint64_t i=blockIdx.x*(uint64_t)blockDim.x+threadIdx.x;i<n;i+=(uint64_t)gridDim.x*blockDim.x) y[i]=a*x[i]+y[i];}
// unroll 4 with loads first
__global__ void s4(int64_t n, float a, const float* x, float* y){
  uint64_t s=(uint64_t)gridDim.x*blockDim.x; uint64_t i=blockIdx.x*(uint64_t)blockDim.x+threadIdx.x;
  for(;i+3*s<n;i+=4*s){ float x0=x[i],x1=x[i+s],x2=x[i+2*s],x3=x[i+3*s]; float y0=y[i],y1=y[i+s],y2=y[i+2*s],y3=y[i+3*s];
    y[i]=a*x0+y0; y[i+s]=a*x1+y1; y[i+2*s]=a*x2+y2; y[i+3*s]=a*x3+y3;}
  for(;i<n;i+=s) y[i]=a*x[i]+y[i];}
// unroll 2
__global__ void s2(int64_t n, float a, const float* x, float* y){
  uint64_t s=(uint64_t)gridDim.x*blockDim.x; uint64_t i=blockIdx.x*(uint64_t)blockDim.x+threadIdx.x;
  for(;i+s<n;i+=2*s){ float x0=x[i],x1=x[i+s]; float y0=y[i],y1=y[i+s]; y[i]=a*x0+y0; y[i+s]=a*x1+y1;}
  for(;i<n;i+=s) y[i]=a*x[i]+y[i];}
// one element per thread, no loop
__global__ void s0(int64_t n, float a, const float* x, float* y){
  uint64_t i=blockIdx.x*(uint64_t)blockDim.x+threadIdx.x; if(i<n) y[i]=a*x[i]+y[i];}
__global__ void s_f4(int64_t n, float a, const float* x, float* y){
  const float4* x4=(const float4*)x; float4* y4=(float4*)y; int64_t n4=n/4;
  for(int64_t i=blockIdx.x*(int64_t)blockDim.x+threadIdx.x;i<n4;i+=(int64_t)gridDim.x*blockDim.x){float4 xv=x4[i],yv=y4[i];
   yv.x=a*xv.x+yv.x;yv.y=a*xv.y+yv.y;yv.z=a*xv.z+yv.z;yv.w=a*xv.w+yv.w;y4[i]=yv;}}
typedef void(*K)(int64_t,float,const float*,float*);
int main(){ int64_t n=1<<28; float*x,*y; cudaMalloc(&x,n*4); cudaMalloc(&y,n*4);
  fill<<<4096,256>>>(n,1,x); fill<<<4096,256>>>(n,2,y);
  cudaEvent_t e0,e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  struct {const char*name; K k; int block; int64_t grid;} v[]={
   {"s1 b128 g=n/2048",s1,128,n/2048},{"s1 b128 g=n/512",s1,128,n/512},{"s1 b256 g=132*8",s1,256,132*8},{"s1 b256 g=132*32",s1,256,132*32},
   {"s0 b128",s0,128,n/128},{"s0 b256",s0,256,n/256},
   {"s2 b128 g=n/2048",s2,128,n/2048},{"s4 b128 g=n/2048",s4,128,n/2048},{"s4 b128 g=n/8192",s4,128,n/8192},{"s4 b256 g=132*16",s4,256,132*16},
   {"f4 b256 g=132*32",s_f4,256,132*32}};
  for(auto&c:v){ float best=1e9; for(int r=0;r<11;r++){cudaEventRecord(e0); c.k<<<c.grid,c.block>>>(n,2.f,x,y); cudaEventRecord(e1); cudaEventSynchronize(e1); float t; cudaEventElapsedTime(&t,e0,e1); if(r&&t<best)best=t;}
   printf("%-22s %.4f ms %.1f GB/s\n",c.name,best,12.0*n/(best*1e6)); }
  cudaError_t e=cudaGetLastError(); printf("%s\n",cudaGetErrorString(e)); }
