// Experiment of session 4 (docs/GPU-RESULTS.md): nvcc's one-row-per-warp SpMV of the 27-point
// stencil with fewer resident blocks (static shared memory) and as a grid-stride loop, to see what
// limits the 4-worker schedule. nvcc -O3 -arch=sm_90 -std=c++17 -o w4 spmv_occupancy.cu && ./w4
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdint>
#include <vector>
__device__ double warp_sum(double s){for(int o=16;o>0;o>>=1)s+=__shfl_xor_sync(0xffffffff,s,o);return s;}
template<int SMEM>
__global__ void w_base(int64_t rows,const int64_t* __restrict__ rp,const int* __restrict__ cols,const double* __restrict__ vals,const double* __restrict__ x,double* __restrict__ y){
  __shared__ double pad[SMEM/8+1]; if(SMEM>0 && threadIdx.x==0 && rows<0) pad[threadIdx.y]=1; if(SMEM>0 && rows<0) y[0]=pad[1];
  int64_t i=blockIdx.x*(int64_t)blockDim.y+threadIdx.y; if(i>=rows)return; double s=0;
  for(int64_t j=rp[i]+threadIdx.x;j<rp[i+1];j+=32)s+=vals[j]*x[cols[j]]; s=warp_sum(s); if(threadIdx.x==0)y[i]=s;}
__global__ void w_stride(int64_t rows,const int64_t* __restrict__ rp,const int* __restrict__ cols,const double* __restrict__ vals,const double* __restrict__ x,double* __restrict__ y){
  for(int64_t i=blockIdx.x*(int64_t)blockDim.y+threadIdx.y;i<rows;i+=(int64_t)gridDim.x*blockDim.y){double s=0;
  for(int64_t j=rp[i]+threadIdx.x;j<rp[i+1];j+=32)s+=vals[j]*x[cols[j]]; s=warp_sum(s); if(threadIdx.x==0)y[i]=s;}}
__global__ void w_nores(int64_t rows,const int64_t* rp,const int* cols,const double* vals,const double* x,double* y){
  int64_t i=blockIdx.x*(int64_t)blockDim.y+threadIdx.y; if(i>=rows)return; double s=0;
  for(int64_t j=rp[i]+threadIdx.x;j<rp[i+1];j+=32)s+=vals[j]*x[cols[j]]; s=warp_sum(s); if(threadIdx.x==0)y[i]=s;}
int main(){int nx=100; int64_t rows=(int64_t)nx*nx*nx; std::vector<int64_t> rp(rows+1,0);
 auto inr=[&](int64_t i){return 1+(i>0)+(i<nx-1);};
 for(int64_t r=0;r<rows;r++){int64_t ix=r%nx,iy=r/nx%nx,iz=r/(nx*nx); rp[r+1]=rp[r]+inr(ix)*inr(iy)*inr(iz);}
 int64_t nnz=rp[rows]; std::vector<int> cols(nnz); std::vector<double> vals(nnz,1.0),x(rows,1.0);
 for(int64_t r=0;r<rows;r++){int64_t ix=r%nx,iy=r/nx%nx,iz=r/(nx*nx),k=rp[r]; for(int dz=-1;dz<=1;dz++)for(int dy=-1;dy<=1;dy++)for(int dx=-1;dx<=1;dx++){int64_t jx=ix+dx,jy=iy+dy,jz=iz+dz; if(jx>=0&&jx<nx&&jy>=0&&jy<nx&&jz>=0&&jz<nx)cols[k++]=(int)((jz*nx+jy)*nx+jx);}}
 int64_t*drp;int*dc;double*dv,*dx,*dy; cudaMalloc(&drp,(rows+1)*8);cudaMalloc(&dc,nnz*4);cudaMalloc(&dv,nnz*8);cudaMalloc(&dx,rows*8);cudaMalloc(&dy,rows*8);
 cudaMemcpy(drp,rp.data(),(rows+1)*8,cudaMemcpyHostToDevice);cudaMemcpy(dc,cols.data(),nnz*4,cudaMemcpyHostToDevice);cudaMemcpy(dv,vals.data(),nnz*8,cudaMemcpyHostToDevice);cudaMemcpy(dx,x.data(),rows*8,cudaMemcpyHostToDevice);
 cudaEvent_t e0,e1;cudaEventCreate(&e0);cudaEventCreate(&e1); dim3 b(32,4);
 auto T=[&](const char*n,auto f){float best=1e9;for(int r=0;r<11;r++){cudaEventRecord(e0);f();cudaEventRecord(e1);cudaEventSynchronize(e1);float t;cudaEventElapsedTime(&t,e0,e1);if(r&&t<best)best=t;}printf("%-28s %.4f ms\n",n,best);};
 unsigned g=(rows+3)/4;
 T("base",[&]{w_base<0><<<g,b>>>(rows,drp,dc,dv,dx,dy);});
 T("smem 16K (13 blocks)",[&]{w_base<16384><<<g,b>>>(rows,drp,dc,dv,dx,dy);});
 T("smem 19K (11 blocks)",[&]{w_base<19456><<<g,b>>>(rows,drp,dc,dv,dx,dy);});
 T("no restrict",[&]{w_nores<<<g,b>>>(rows,drp,dc,dv,dx,dy);});
 for(unsigned gg: {15625u,31250u,62500u}){char s[64];sprintf(s,"grid-stride g=%u",gg);T(s,[&]{w_stride<<<gg,b>>>(rows,drp,dc,dv,dx,dy);});}
 printf("%s\n",cudaGetErrorString(cudaGetLastError()));}
