// A C++ render loop for the sampler: its hot functions have mangled names
// (_ZN8plrender5Scene4drawEm, and one past 64 characters, as LLVM's are
// inside Mesa's llvmpipe), which the report must show as C++ reads them.
// With STRIPPED_LIB it also spends time in that library's static code
// (test/preload/stripped_lib.c); IDLE_SECONDS, then sleeps that long
// before it exits (the sampler's windows meanwhile have no busy sample).
//
//   cxx_renderer SECONDS [STRIPPED_LIB|-] [IDLE_SECONDS]
//
// Prints "frames N".
//
// Built with -DCXX_HOT_HIDDEN (cxx_hidden_renderer, for
// preload_sampler_symbols) the hot functions are hidden, as a stripped
// program's own code is: only its debug file names them.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <dlfcn.h>

extern "C" unsigned int eglSwapBuffers(void *dpy, void *surface);

#ifdef CXX_HOT_HIDDEN
#define HOT_VISIBILITY "hidden"
#else
#define HOT_VISIBILITY "default"
#endif

namespace plrender {
struct Scene {
	__attribute__((noinline, visibility(HOT_VISIBILITY))) static std::uint64_t draw(std::uint64_t n);
};

std::uint64_t Scene::draw(std::uint64_t n)
{
	std::uint64_t x = n;

	for (std::uint64_t i = 0; i < n; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}
// a name as long as the ones C++ libraries have: its mangled form is 95
// characters, longer than the sampler keeps a name
namespace pipeline_stages {
struct ShaderCompilationContext {
	__attribute__((noinline, visibility(HOT_VISIBILITY))) static std::uint64_t
	compileAndLinkEverything(std::uint64_t n, const char *label, double weight);
};

std::uint64_t ShaderCompilationContext::compileAndLinkEverything(std::uint64_t n, const char *label,
								  double weight)
{
	std::uint64_t x = n + (std::uint64_t)weight + (std::uint64_t)label[0];

	for (std::uint64_t i = 0; i < n; i++) {
		x = x * 2862933555777941757ull + 3037000493ull;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}
} // namespace pipeline_stages
} // namespace plrender

static double now_s()
{
	timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	std::uint64_t (*stripped_entry)(std::uint64_t) = nullptr;

	if (argc < 2 || argc > 4) {
		std::fprintf(stderr, "usage: cxx_renderer SECONDS [STRIPPED_LIB|-] [IDLE_SECONDS]\n");
		return 2;
	}
	if (argc >= 3 && std::strcmp(argv[2], "-") != 0) {
		void *lib = dlopen(argv[2], RTLD_NOW);
		void *sym = lib ? dlsym(lib, "stripped_entry") : nullptr;

		if (!sym) {
			std::fprintf(stderr, "cxx_renderer: %s\n", dlerror());
			return 1;
		}
		*(void **)&stripped_entry = sym;
	}
	double end = now_s() + std::atof(argv[1]);
	// the C++ runtime in use, as in any C++ program (and so loaded)
	auto *sink = new std::uint64_t(0);
	unsigned long frames = 0;

	while (now_s() < end) {
		*sink += plrender::Scene::draw(2000000);
		*sink += plrender::pipeline_stages::ShaderCompilationContext::compileAndLinkEverything(
			1000000, "frame", 1.5);
		if (stripped_entry)
			*sink += stripped_entry(2000000);
		eglSwapBuffers(nullptr, nullptr);
		frames++;
	}
	if (argc == 4) {
		double idle_s = std::atof(argv[3]);
		timespec idle = { (time_t)idle_s, (long)((idle_s - (double)(time_t)idle_s) * 1e9) };

		while (nanosleep(&idle, &idle) != 0)
			;
	}
	std::printf("frames %lu\n", frames);
	delete sink;
	return 0;
}
