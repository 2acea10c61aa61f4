// Runs a C core kernel's schedule (kernels/core/README.md) on the threads OpenVINO gives the stream:
// TBB inside the stream's arena (OpenVINO calls evaluate there), never OpenMP, which measured 2-4x
// slower inside OpenVINO (its workers inherit the calling thread's one-CPU mask and spin).
#pragma once

#include <new>
#include <string>

#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>

#include "errors.hpp"

extern "C" {
#include "schedule.h"
#include "scratch.h"
#include "status.h"
}

namespace irgrid_ov {

// A call's scratch, taken from an op's cache and given back when the call ends (kernels/core/scratch.h:
// kept between calls, so its pages are not faulted in and zeroed again on every inference).
class Scratch {
public:
    Scratch(irgrid_scratch_cache& cache, size_t bytes) : m_cache(cache) {
        if (bytes && !(m_bytes = static_cast<unsigned char*>(irgrid_scratch_take(&cache, bytes)))) throw std::bad_alloc();
    }
    ~Scratch() { irgrid_scratch_give(&m_cache, m_bytes); }
    Scratch(const Scratch&) = delete;
    Scratch& operator=(const Scratch&) = delete;
    unsigned char* get() const { return m_bytes; }

private:
    irgrid_scratch_cache& m_cache;
    unsigned char* m_bytes = nullptr;
};

// plan(p), then every phase's units over at most `workers` of the arena's threads, each worker with its
// own scratch (from `cache`), in contiguous runs of units (a worker's scratch may carry state from unit to unit). A
// unit's outputs do not depend on which worker runs it, so the bits do not depend on the thread or
// stream count.
template <class Problem, class Plan, class Run>
void drive(Problem& problem, int workers, Plan plan, Run run, irgrid_scratch_cache& cache) {
    int status = plan(&problem);
    if (status != IRGRID_OK)
        throw OpError("ShapeError", std::string("the kernel refuses this problem: ") + irgrid_error_text(status));
    const irgrid_schedule& s = problem.schedule;
    if (s.workers > 0 && s.workers < workers) workers = s.workers;
    if (workers < 1) workers = 1;
    Scratch memory(cache, s.worker_bytes * workers + s.shared_bytes);
    unsigned char* const scratch = memory.get();
    unsigned char* const shared = s.shared_bytes ? scratch + s.worker_bytes * workers : nullptr;
    for (int w = 0; s.worker_bytes && w < workers; w++) irgrid_worker_reset(scratch + w * s.worker_bytes);
    const irgrid_index rounds = s.rounds > 0 ? s.rounds : 1;
    for (irgrid_index round = 0; round < rounds; round++)
        for (int k = 0; k < s.phases; k++) {
            const irgrid_index units = s.units[k];
            const int phase = (int)(round * s.phases + k);
            if (units <= 0) continue;
            const int team = units < workers ? (int)units : workers;
            auto part = [&](int w) {
                irgrid_index begin = units * w / team, end = units * (w + 1) / team;
                if (begin < end)
                    run(&problem, phase, shared, s.worker_bytes ? scratch + w * s.worker_bytes : nullptr, begin, end);
            };
            if (team <= 1)
                part(0);
            else
                tbb::parallel_for(0, team, part, tbb::static_partitioner{});
        }
}

// The threads of the arena OpenVINO runs this op in (the stream's).
inline int arena_threads() { return tbb::this_task_arena::max_concurrency(); }

}  // namespace irgrid_ov
