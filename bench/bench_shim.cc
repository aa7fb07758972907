// bench_shim.cc -- the C API of bench_shim.h over Google Benchmark (Debian 12's 1.7.1).
//
// The only file of the project that includes benchmark/benchmark.h. Benchmarks are kept in
// a registry of this file (name, function, argument, repetitions) and handed to Google
// Benchmark only inside ada_bench_run, so the minimum time and the output path given there
// apply to all of them; the registry is cleared on return (ada_bench_run can be called again).
//
// Every benchmark: UseManualTime (the C function times itself, e.g. with CUDA events),
// Repetitions(n), individual repetitions kept in the JSON (compare's Mann-Whitney U test needs
// them) beside Google Benchmark's mean/median/stddev/cv aggregates, times in microseconds.
// Flags reach Google Benchmark through a synthetic argv given to benchmark::Initialize:
// --benchmark_out=<path> --benchmark_out_format=json [--benchmark_min_time=<s>].
// While running, one progress line per benchmark goes to stderr (which one, how many are
// left, time so far), because GPU sets run for minutes.
#include "bench_shim.h"

#include <benchmark/benchmark.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include <unistd.h>

namespace {

struct entry {
    std::string name;
    ada_bench_fn fn;
    void *arg;
    int repetitions;
};

// The registry and the run's progress. Not a library global in the C sense: it is the
// process-wide table Google Benchmark itself keeps, mirrored here until ada_bench_run.
struct shim_state {
    std::vector<entry> entries;
    std::vector<std::pair<std::string, std::string>> context;
    std::chrono::steady_clock::time_point t0;
    long last_index = -1;
    long started = 0;
    long total = 0;
};

shim_state &shim()
{
    static shim_state s;
    return s;
}

void progress(long index, const std::string &name)
{
    shim_state &s = shim();
    if (index == s.last_index) return; // a later repetition of the same benchmark
    s.last_index = index;
    s.started++;
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - s.t0).count();
    std::fprintf(stderr, "adaload bench: [%ld/%ld] %s (%ld left, %.1f s so far)\n", s.started,
                 s.total, name.c_str(), s.total - s.started, secs);
    std::fflush(stderr);
}

benchmark::State *S(ada_bench_state *st) { return reinterpret_cast<benchmark::State *>(st); }
const benchmark::State *S(const ada_bench_state *st)
{
    return reinterpret_cast<const benchmark::State *>(st);
}

// Google Benchmark appends "/min_time:.../repeats:N/manual_time" to every name it reports;
// the project's names are stable keys of its history, so both reporters print and write
// the bare name we registered.
void strip_name(benchmark::BenchmarkReporter::Run &r)
{
    r.run_name.min_time.clear();
    r.run_name.min_warmup_time.clear();
    r.run_name.iterations.clear();
    r.run_name.repetitions.clear();
    r.run_name.time_type.clear();
    r.run_name.threads.clear();
}

// Google Benchmark writes a non-finite number as a bare NaN/Infinity, which strict JSON
// parsers reject. Counters are finite when set (ada_bench_counter), but an aggregate can
// still be 0/0: the "cv" of a counter that is 0 in every repetition. Such a value becomes 0.
void finite_only(benchmark::BenchmarkReporter::Run &r)
{
    if (!std::isfinite(r.real_accumulated_time)) r.real_accumulated_time = 0;
    if (!std::isfinite(r.cpu_accumulated_time)) r.cpu_accumulated_time = 0;
    for (auto &kv : r.counters)
        if (!std::isfinite(kv.second.value)) kv.second.value = 0;
}

template <class Base> class bare_names : public Base {
  public:
    using Base::Base;
    void ReportRuns(const std::vector<benchmark::BenchmarkReporter::Run> &runs) override
    {
        std::vector<benchmark::BenchmarkReporter::Run> copy = runs;
        for (auto &r : copy) {
            strip_name(r);
            finite_only(r);
        }
        Base::ReportRuns(copy);
    }
};

} // namespace

extern "C" {

int ada_bench_register(const char *name, ada_bench_fn fn, void *arg, int repetitions)
{
    if (!name || !*name || !fn || repetitions < 1) return -1;
    shim().entries.push_back(entry{name, fn, arg, repetitions});
    return 0;
}

int ada_bench_keep_running(ada_bench_state *st) { return S(st)->KeepRunning() ? 1 : 0; }

int64_t ada_bench_iterations(const ada_bench_state *st)
{
    return static_cast<int64_t>(S(st)->iterations());
}

void ada_bench_set_iteration_time(ada_bench_state *st, double seconds)
{
    // Google Benchmark divides by the accumulated manual time: keep it finite and positive.
    if (!std::isfinite(seconds) || seconds < 0) seconds = 0;
    S(st)->SetIterationTime(seconds);
}

void ada_bench_set_bytes_processed(ada_bench_state *st, int64_t bytes)
{
    S(st)->SetBytesProcessed(bytes);
}

void ada_bench_counter(ada_bench_state *st, const char *name, double value)
{
    benchmark::State *s = S(st);
    if (!std::isfinite(value)) {
        // Google Benchmark would print a bare nan/inf, which no strict JSON parser accepts.
        s->counters[name] = benchmark::Counter(0.0);
        if (!s->error_occurred()) {
            std::string msg = std::string("counter ") + name + " is not finite";
            s->SkipWithError(msg.c_str());
        }
        return;
    }
    s->counters[name] = benchmark::Counter(value);
}

void ada_bench_skip(ada_bench_state *st, const char *message)
{
    benchmark::State *s = S(st);
    if (!s->error_occurred()) s->SkipWithError(message ? message : "skipped");
}

void ada_bench_add_context(const char *key, const char *value)
{
    if (!key || !value) return;
    for (auto &kv : shim().context)
        if (kv.first == key) {
            kv.second = value;
            return;
        }
    shim().context.emplace_back(key, value);
}

int ada_bench_run(const char *json_path, const char *filter, double min_time_s)
{
    shim_state &s = shim();
    if (!json_path || !*json_path || !std::isfinite(min_time_s) || min_time_s < 0) {
        s.entries.clear();
        return -1;
    }
    std::vector<std::string> args = {"adaload", std::string("--benchmark_out=") + json_path,
                                     "--benchmark_out_format=json"};
    // The filter is applied here, on the bare names, with POSIX extended syntax (as the rest
    // of adaload); Google Benchmark's own filter would see the decorated names.
    std::regex re;
    if (filter && *filter) {
        try {
            re = std::regex(filter, std::regex::extended | std::regex::nosubs);
        } catch (const std::regex_error &) {
            s.entries.clear();
            return -1;
        }
    }
    std::vector<char *> argv;
    for (auto &a : args) argv.push_back(&a[0]);
    argv.push_back(nullptr);
    int argc = static_cast<int>(args.size());
    benchmark::Initialize(&argc, argv.data());
    if (argc != 1) { // a flag Google Benchmark did not take: our own bug
        s.entries.clear();
        return -1;
    }

    // Context is process-wide in Google Benchmark and a key cannot be added twice: add
    // each key once per process and keep the first value (later runs reuse it).
    static std::map<std::string, std::string> added;
    for (auto &kv : s.context)
        if (added.emplace(kv.first, kv.second).second) benchmark::AddCustomContext(kv.first, kv.second);
    s.context.clear();

    benchmark::ClearRegisteredBenchmarks();
    std::vector<entry> selected;
    for (auto &e : s.entries)
        if (!(filter && *filter) || std::regex_search(e.name, re)) selected.push_back(e);
    s.entries = selected;
    for (size_t i = 0; i < s.entries.size(); i++) {
        entry e = s.entries[i];
        long index = static_cast<long>(i);
        benchmark::internal::Benchmark *b = benchmark::RegisterBenchmark(
            e.name.c_str(), [e, index](benchmark::State &state) {
                progress(index, e.name);
                e.fn(reinterpret_cast<ada_bench_state *>(&state), e.arg);
            });
        b->UseManualTime()->Repetitions(e.repetitions)->ReportAggregatesOnly(false);
        b->DisplayAggregatesOnly(false)->Unit(benchmark::kMicrosecond);
        if (min_time_s > 0) b->MinTime(min_time_s);
    }
    s.total = static_cast<long>(s.entries.size());
    s.started = 0;
    s.last_index = -1;
    s.t0 = std::chrono::steady_clock::now();
    bare_names<benchmark::ConsoleReporter> display(
        isatty(STDOUT_FILENO) ? benchmark::ConsoleReporter::OO_Color : benchmark::ConsoleReporter::OO_None);
    bare_names<benchmark::JSONReporter> file;
    size_t matched = s.entries.empty() ? 0 : benchmark::RunSpecifiedBenchmarks(&display, &file);
    benchmark::ClearRegisteredBenchmarks();
    s.entries.clear();
    if (matched == 0) {
        // Nothing registered or matched: Google Benchmark writes no file then, but callers
        // still get a valid (empty) Google Benchmark JSON document.
        std::FILE *f = std::fopen(json_path, "w");
        if (!f) return -1;
        int ok = std::fputs("{\n  \"context\": {},\n  \"benchmarks\": []\n}\n", f) >= 0;
        ok = (std::fclose(f) == 0) && ok;
        if (!ok) return -1;
    }
    // Report what really started (Google Benchmark counts repetitions and aggregates).
    return static_cast<int>(s.started);
}

} // extern "C"
