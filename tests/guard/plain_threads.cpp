/* SPDX-License-Identifier: BSD-3-Clause */
/* A C++ program that runs threads of its own, as many do: MPI_Init (so
 * MPI_THREAD_SINGLE), MPI called from the main thread only, and each array just received
 * summed by std::thread workers. First a team started for every array and joined, then a
 * pool kept across iterations, then the main thread alone again. Under
 * libmpix-guard.so or guard_inject.h the output must be the plain run's: a receive still
 * in flight when a worker starts is finished first, the calls are the plain ones while
 * the pool runs, and guarded again once it is gone (MPIX_TEST_GUARD=paused). */
#include <mpi.h>

#include <condition_variable>
#include <cstdio>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace {

const int elements = 1 << 20;
const int workers = 2;

double part_sum(const std::vector<double> &data, int part, int parts)
{
    double sum = 0;
    for (std::size_t i = data.size() * part / parts; i < data.size() * (part + 1) / parts; i++)
        sum += data[i];
    return sum;
}

/* A ring, blocking: even ranks send first. */
void exchange(const std::vector<double> &out, std::vector<double> &in, int rank, int left, int right, int tag)
{
    if (rank % 2 == 0) {
        MPI_Send(out.data(), elements, MPI_DOUBLE, right, tag, MPI_COMM_WORLD);
        MPI_Recv(in.data(), elements, MPI_DOUBLE, left, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(in.data(), elements, MPI_DOUBLE, left, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(out.data(), elements, MPI_DOUBLE, right, tag, MPI_COMM_WORLD);
    }
}

/* Workers started once; run() gives each the same job and waits for all of them. */
class Pool {
  public:
    explicit Pool(int size) : generation_(0), busy_(0), stopping_(false)
    {
        for (int i = 0; i < size; i++)
            threads_.emplace_back([this, i] { work(i); });
    }
    ~Pool()
    {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            stopping_ = true;
        }
        wake_.notify_all();
        for (std::thread &thread : threads_)
            thread.join();
    }
    void run(std::function<void(int)> job)
    {
        std::unique_lock<std::mutex> lock(mutex_);
        job_ = std::move(job);
        busy_ = static_cast<int>(threads_.size());
        generation_++;
        wake_.notify_all();
        done_.wait(lock, [this] { return busy_ == 0; });
    }

  private:
    void work(int index)
    {
        unsigned long seen = 0;
        for (;;) {
            std::unique_lock<std::mutex> lock(mutex_);
            wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
            if (stopping_)
                return;
            seen = generation_;
            lock.unlock();
            job_(index);
            lock.lock();
            if (--busy_ == 0)
                done_.notify_one();
        }
    }
    std::vector<std::thread> threads_;
    std::mutex mutex_;
    std::condition_variable wake_, done_;
    std::function<void(int)> job_;
    unsigned long generation_;
    int busy_;
    bool stopping_;
};

int check(double sum, int rank, int left, int iteration)
{
    double want = static_cast<double>(elements) * (left + iteration);
    if (sum == want)
        return 0;
    std::fprintf(stderr, "rank %d, iteration %d: sum %.0f, want %.0f\n", rank, iteration, sum, want);
    return 1;
}

} // namespace

int main(int argc, char **argv)
{
    int rank, ranks, wrong = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    int left = (rank + ranks - 1) % ranks, right = (rank + 1) % ranks;
    std::vector<double> out(elements);
    int iteration = 0;

    for (; iteration < 4; iteration++) {   /* a team for every array */
        out.assign(elements, rank + iteration);
        std::vector<double> in(elements);
        exchange(out, in, rank, left, right, iteration);
        std::vector<double> partial(workers);
        std::vector<std::thread> team;
        for (int w = 0; w < workers; w++)
            team.emplace_back([&, w] { partial[w] = part_sum(in, w, workers); });
        for (std::thread &thread : team)
            thread.join();
        wrong += check(partial[0] + partial[1], rank, left, iteration);
    }
    {
        Pool pool(workers);   /* kept across iterations */
        for (; iteration < 8; iteration++) {
            out.assign(elements, rank + iteration);
            std::vector<double> in(elements);
            exchange(out, in, rank, left, right, iteration);
            std::vector<double> partial(workers);
            pool.run([&](int w) { partial[w] = part_sum(in, w, workers); });
            wrong += check(partial[0] + partial[1], rank, left, iteration);
        }
    }
    for (; iteration < 10; iteration++) {   /* the main thread alone */
        out.assign(elements, rank + iteration);
        std::vector<double> in(elements);
        exchange(out, in, rank, left, right, iteration);
        wrong += check(part_sum(in, 0, 1), rank, left, iteration);
    }

    int all_wrong = 0;
    MPI_Allreduce(&wrong, &all_wrong, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        std::printf("plain_threads: %d ranks, %d iterations, %d wrong sums\n", ranks, iteration, all_wrong);
    MPI_Finalize();
    return all_wrong != 0;
}
