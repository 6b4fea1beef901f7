// A process-wide set of parked worker threads for splitting one call's work
// into chunks, so that a parse of a 256-record batch does not pay for
// starting and joining threads every time.
#pragma once

#include <functional>

namespace tfrx {

// Runs fn(0) .. fn(k - 1) and returns when all have returned: fn(0) on the
// calling thread, the others on parked workers (started on first use, at most
// k - 1 of them, kept for later calls). A call that finds the workers busy
// with another caller's chunks starts threads of its own for this call, as
// does a call in a process forked after the workers started (the child has
// none of them). The first exception thrown by a chunk is rethrown here
// after every chunk has finished.
void run_chunks(int k, const std::function<void(int)>& fn);

}  // namespace tfrx
