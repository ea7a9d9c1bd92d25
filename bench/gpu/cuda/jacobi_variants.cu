// Experiment of session 4 (docs/GPU-RESULTS.md): the Jacobi copy and stencil row by row (as acc
// maps the guide's loops), unrolled, and in nvcc's 2-D blocks, for several grids and block sizes.
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdint>
// copy kernels: A[j,i] = B[j,i] interior
__global__ void c2d(int n,int m,const double* __restrict__ B,double* __restrict__ A){int i=blockIdx.x*blockDim.x+threadIdx.x+1,j=blockIdx.y*blockDim.y+threadIdx.y+1; if(i<m-1&&j<n-1){size_t k=(size_t)j*m+i;A[k]=B[k];}}
// acc-like: gang per row (grid-stride over rows), vector loop over i with stride blockDim
__global__ void crow(int n,int m,const double* B,double* A){for(int64_t j=1+blockIdx.x;j<n-1;j+=gridDim.x){for(int64_t i=1+threadIdx.x;i<m-1;i+=blockDim.x){A[j*m+i]=B[j*m+i];}}}
__global__ void crow4(int n,int m,const double* B,double* A){for(int64_t j=1+blockIdx.x;j<n-1;j+=gridDim.x){int64_t s=blockDim.x;int64_t i=1+threadIdx.x;
  for(;i+3*s<m-1;i+=4*s){double b0=B[j*m+i],b1=B[j*m+i+s],b2=B[j*m+i+2*s],b3=B[j*m+i+3*s];A[j*m+i]=b0;A[j*m+i+s]=b1;A[j*m+i+2*s]=b2;A[j*m+i+3*s]=b3;}
  for(;i<m-1;i+=s)A[j*m+i]=B[j*m+i];}}
__global__ void srow(int n,int m,const double* A,double* B, double* part){double e=0;for(int64_t j=1+blockIdx.x;j<n-1;j+=gridDim.x){for(int64_t i=1+threadIdx.x;i<m-1;i+=blockDim.x){int64_t k=j*m+i;double v=0.25*(A[k+1]+A[k-1]+A[k-m]+A[k+m]);B[k]=v;e=fmax(e,fabs(v-A[k]));}}
  if(e<0)part[0]=e;}
__global__ void srow4(int n,int m,const double* A,double* B, double* part){double e=0;for(int64_t j=1+blockIdx.x;j<n-1;j+=gridDim.x){int64_t s=blockDim.x;int64_t i=1+threadIdx.x;
  for(;i+3*s<m-1;i+=4*s){double v[4],c[4];
#pragma unroll
   for(int u=0;u<4;u++){int64_t k=j*m+i+u*s;v[u]=0.25*(A[k+1]+A[k-1]+A[k-m]+A[k+m]);c[u]=A[k];}
#pragma unroll
   for(int u=0;u<4;u++){int64_t k=j*m+i+u*s;B[k]=v[u];e=fmax(e,fabs(v[u]-c[u]));}}
  for(;i<m-1;i+=s){int64_t k=j*m+i;double v=0.25*(A[k+1]+A[k-1]+A[k-m]+A[k+m]);B[k]=v;e=fmax(e,fabs(v-A[k]));}}
  if(e<0)part[0]=e;}
__global__ void s2d(int n,int m,const double* __restrict__ A,double* __restrict__ B,double* part){int i=blockIdx.x*blockDim.x+threadIdx.x+1,j=blockIdx.y*blockDim.y+threadIdx.y+1; double e=0; if(i<m-1&&j<n-1){size_t k=(size_t)j*m+i;double v=0.25*(A[k+1]+A[k-1]+A[k-m]+A[k+m]);B[k]=v;e=fabs(v-A[k]);} if(e<0)part[0]=e;}
int main(){int n=4096,m=4096; double*A,*B,*P; cudaMalloc(&A,(size_t)n*m*8);cudaMalloc(&B,(size_t)n*m*8);cudaMalloc(&P,8);cudaMemset(A,0,(size_t)n*m*8);cudaMemset(B,0,(size_t)n*m*8);
 cudaEvent_t e0,e1;cudaEventCreate(&e0);cudaEventCreate(&e1); dim3 b2(64,4),g2((m-2+63)/64,(n-2+3)/4);
 auto T=[&](const char*name,auto f){float best=1e9;for(int r=0;r<21;r++){cudaEventRecord(e0);f();cudaEventRecord(e1);cudaEventSynchronize(e1);float t;cudaEventElapsedTime(&t,e0,e1);if(r&&t<best)best=t;}printf("%-26s %8.1f us %7.1f GB/s\n",name,best*1e3,16.0*(n-2)*(m-2)/(best*1e6));};
 T("copy 2d 64x4",[&]{c2d<<<g2,b2>>>(n,m,B,A);});
 for(int g: {1024,2048,4094}) for(int b:{128,256,512}){char s[64];sprintf(s,"copy row g%d b%d",g,b);T(s,[&]{crow<<<g,b>>>(n,m,B,A);});sprintf(s,"copy row4 g%d b%d",g,b);T(s,[&]{crow4<<<g,b>>>(n,m,B,A);});}
 T("stencil 2d 64x4",[&]{s2d<<<g2,b2>>>(n,m,A,B,P);});
 for(int g: {1024,2048,4094}) for(int b:{128,256,512}){char s[64];sprintf(s,"sten row g%d b%d",g,b);T(s,[&]{srow<<<g,b>>>(n,m,A,B,P);});sprintf(s,"sten row4 g%d b%d",g,b);T(s,[&]{srow4<<<g,b>>>(n,m,A,B,P);});}
 printf("%s\n",cudaGetErrorString(cudaGetLastError()));}
