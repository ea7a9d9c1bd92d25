/* The C oracle for the printf conformance scripts: each function makes the same printf calls
 * as the script of the same name, with integers passed as long long (acc passes every integer
 * as i64, LANGUAGE.md 6 / docs/ABI.md) and floats as double (f32 arguments are converted to
 * double exactly, as C's default argument promotion does).
 *
 *   gcc -O0 -o /tmp/printf_oracle printf_oracle.c && /tmp/printf_oracle printf_d > ../printf_d.out
 * (write_outputs.sh does this for every test.)
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

typedef long long ll;

static void printf_d(void) {
    printf("%lld|%lli|%5lld|%-5lld|%05lld\n", 42LL, 42LL, 42LL, 42LL, 42LL);
    printf("%+lld|% lld|%+lld|% lld\n", 7LL, 7LL, -7LL, -7LL);
    printf("%.3lld|%8.3lld|%-8.3lld|\n", 7LL, -7LL, 7LL);
    printf("%lld %lld\n", -9223372036854775807LL - 1, 9223372036854775807LL);
    int k = -2147483647 - 1;
    printf("%lld %lld %lld\n", (ll)k, (ll)k, 123LL);
    printf("[%.0lld] [%5.0lld]\n", 0LL, 0LL);
    printf("%-+6lld|%+06lld|%06lld\n", 12LL, 12LL, -12LL);
}

static void printf_u_x(void) {
    printf("%llu %llu %llu\n", 0ULL, 4294967295ULL, 9223372036854775807ULL);
    printf("%llx %llx %llx\n", 255ULL, 3735928559ULL, 9223372036854775807ULL);
    printf("%#llx|%08llx|%-6llx|%#010llx|%.4llx\n", 31ULL, 31ULL, 31ULL, 31ULL, 31ULL);
    printf("%#llx %llx\n", 0ULL, 0ULL);
    int k = 65535;
    printf("%llx %5llu\n", (unsigned long long)k, (unsigned long long)k);
}

static void printf_f(void) {
    printf("%f|%.2f|%10.3f|%-10.2f|%+f|%08.2f\n", 3.14159, 3.14159, 3.14159, 3.14159, 3.14159, -3.14159);
    printf("%.0f %.0f %.0f %.0f %.0f\n", 0.5, 1.5, 2.5, -0.5, 3.5);
    printf("%#.0f|%.1f|%.10f|%.3f\n", 3.0, 0.05, 0.1, 2.0005);
    printf("%f\n", 1e20);
    printf("% .3f|%f|%.2f\n", 2.5, -0.0, 0.005);
    printf("%5lld, %0.6f\n", 100LL, 0.002397);
    printf("%.20f\n", 0.1);
}

static void printf_e(void) {
    printf("%e|%.3e|%12.4e|%-12.2e|%+e\n", 1234.5678, 1234.5678, 1234.5678, 1234.5678, 1234.5678);
    printf("%e %e\n", 0.0, -0.0);
    printf("%e %.2e\n", 1e100, 1.5e-300);
    printf("%.0e %#.0e\n", 12345.0, 12345.0);
    printf("%010.2e|% e\n", -1.5, 2.0);
    printf("%0.6e\n", 0.00024192630);
}

static void printf_g(void) {
    printf("%g %g %g %g\n", 100000.0, 1000000.0, 0.0001, 0.00001);
    printf("%g %g %g\n", 0.5, 1.0 / 3.0, 123456789.0);
    printf("%.3g|%.10g|%#g|%10.3g|%-10g|\n", 3.14159, 3.14159, 3.0, 1234.5, 2.5);
    printf("%g %g %g\n", 0.0, 1e-300, -2.5e16);
    printf("%.0g %.1g %.2g\n", 15.0, 0.25, 0.000123456);
    printf("%+g|%08g\n", 1.5, -1.5);
}

static void printf_s_c(void) {
    printf("%s|%10s|%-10s|%.2s|%5.1s|\n", "hello", "hello", "hello", "hello", "hello");
    printf("[%s]\n", "");
    printf("%c%c%c|%3c|%-3c|\n", 65, 98, 33, 90, 122);
    int k = 48;
    printf("%c\n", k + 9);
    printf("%s=%lld\n", "n", 3LL);
}

static void printf_text_and_percent(void) {
    printf("100%%\n");
    printf("no conversions\n");
    printf("tab\tsep|%lld%%|\n", 5LL);
    printf("a");
    printf("b\n");
    printf("%lld", 1LL);
    printf("%s\n", " then print");
}

static void printf_float_types(void) {
    printf("%.10f %.10f\n", (double)0.1f, 0.1);
    float x = 1.0f / 3.0f;
    printf("%.12f %e %g\n", (double)x, (double)x, (double)x);
    double y = x;
    printf("%.17g\n", y);
}

static void printf_special_floats(void) {
    double z = 0.0;
    double inf = 1.0 / z;
    printf("%f %f %e %g\n", inf, -inf, inf, -inf);
    printf("|%6.1f|%-6f|%+f|%06f|\n", inf, inf, inf, inf);
}

struct entry { const char *name; void (*fn)(void); };
static const struct entry tests[] = {
    {"printf_d", printf_d},
    {"printf_u_x", printf_u_x},
    {"printf_f", printf_f},
    {"printf_e", printf_e},
    {"printf_g", printf_g},
    {"printf_s_c", printf_s_c},
    {"printf_text_and_percent", printf_text_and_percent},
    {"printf_float_types", printf_float_types},
    {"printf_special_floats", printf_special_floats},
};

int main(int argc, char **argv) {
    for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
        if (argc < 2) {
            puts(tests[i].name);
        } else if (strcmp(argv[1], tests[i].name) == 0) {
            tests[i].fn();
            return 0;
        }
    }
    return argc < 2 ? 0 : 1;
}
