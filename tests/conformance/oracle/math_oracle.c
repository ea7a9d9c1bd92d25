/* The C oracle for builtin_math_transcendental (arg f64) and the first two lines of
 * builtin_math_f32 (arg f32). Each value is printed as the script prints it, and checked to print
 * the same at +-4 ulp (f64) / +-2 ulp (f32), so that any accurate libm gives the same text;
 * the exit status counts unstable values. gcc -o /tmp/m math_oracle.c -lm */
#include <math.h>
#include <stdio.h>
#include <string.h>
/* print with fmt; also check stability under +-4 ulp (f64) or +-2 ulp (f32) */
static int bad=0;
static void chk(const char *fmt, double v){ char a[100],b[100]; snprintf(a,100,fmt,v); double lo=v,hi=v;
 for(int i=0;i<4;i++){lo=nextafter(lo,-INFINITY);hi=nextafter(hi,INFINITY);} 
 snprintf(b,100,fmt,lo); if(strcmp(a,b)){bad++;fprintf(stderr,"unstable %s %s\n",a,b);} snprintf(b,100,fmt,hi); if(strcmp(a,b)){bad++;fprintf(stderr,"unstable %s %s\n",a,b);} fputs(a,stdout);}
static void chkf(const char *fmt, float v){ char a[100],b[100]; snprintf(a,100,fmt,(double)v); float lo=v,hi=v;
 for(int i=0;i<2;i++){lo=nextafterf(lo,-INFINITY);hi=nextafterf(hi,INFINITY);}
 snprintf(b,100,fmt,(double)lo); if(strcmp(a,b)){bad++;fprintf(stderr,"unstable %s %s\n",a,b);} snprintf(b,100,fmt,(double)hi); if(strcmp(a,b)){bad++;fprintf(stderr,"unstable %s %s\n",a,b);} fputs(a,stdout);}
#define S fputs(" ",stdout)
#define N fputs("\n",stdout)
int main(int argc,char**argv){
 if(argc>1 && !strcmp(argv[1],"f64")){
 chk("%.12f",exp(1.0));S;chk("%.12f",log(10.0));S;chk("%.12f",log2(10.0));N;
 chk("%.12f",log10(2.0));S;chk("%.12f",expm1(0.5));S;chk("%.12f",log1p(0.5));N;
 chk("%.12f",sin(1.0));S;chk("%.12f",cos(1.0));S;chk("%.12f",tan(1.0));N;
 chk("%.12f",asin(0.5));S;chk("%.12f",acos(0.5));S;chk("%.12f",atan(1.0));S;chk("%.12f",atan2(1.0,-1.0));N;
 chk("%.12f",sinh(1.0));S;chk("%.12f",cosh(1.0));S;chk("%.12f",tanh(0.5));N;
 chk("%.12f",pow(2.0,0.5));S;chk("%.12f",cbrt(2.0));S;chk("%.12f",exp2(0.5));N;
 chk("%.6e",expm1(1e-10));S;chk("%.6e",log1p(1e-10));N;
 } else {
 float x=1.0f;
 chkf("%.5f",sinf(x));S;chkf("%.5f",cosf(x));S;chkf("%.5f",expf(x));N;
 chkf("%.5f",logf(2.0f));S;chkf("%.5f",atan2f(1.0f,2.0f));S;chkf("%.5f",powf(x*2.0f,0.5f));N;
 }
 return bad;
}
