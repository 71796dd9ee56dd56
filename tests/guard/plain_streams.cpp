// SPDX-License-Identifier: BSD-3-Clause
// A C++ MPI program without mpix that hands its message vectors to iostreams the moment
// the blocking calls return: each process sends 1 MiB to its right neighbour and reads a
// file into that vector with std::ifstream at once, receives from its left neighbour and
// writes what it received with std::ofstream at once (the library's large transfers go
// to the kernel straight from the vectors). Every value is checked. Run plain, under
// LD_PRELOAD=libmpix-guard.so and built with -include mpix/guard_inject.h
// (tests/guard/preload_check.sh), it must print the same.
#include <mpi.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <unistd.h>
#include <vector>

static double value(int owner, int step, std::size_t i) { return owner * 1e7 + step * 1e5 + static_cast<double>(i); }

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, failures = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int left = (rank + size - 1) % size, right = (rank + 1) % size;
    const std::string stem = std::string(argc > 1 ? argv[1] : "/tmp") + "/plain_streams-" + std::to_string(rank) +
                             "-" + std::to_string(getpid());
    std::vector<double> sent(1 << 17), received(sent.size()), back(sent.size());
    const std::streamsize bytes = static_cast<std::streamsize>(sent.size() * sizeof(double));
    for (int step = 0; step < 3; step++) {
        for (std::size_t i = 0; i < sent.size(); i++)
            back[i] = -value(rank, step, i);
        std::ofstream(stem + "-in", std::ios::binary).write(reinterpret_cast<const char *>(back.data()), bytes);
        for (std::size_t i = 0; i < sent.size(); i++)
            sent[i] = value(rank, step, i);
        // Even ranks send first: a ring of any size, the messages too long to be buffered.
        for (int turn = 0; turn < 2; turn++) {
            if ((turn == 0) == (rank % 2 == 0)) {
                MPI_Send(sent.data(), static_cast<int>(sent.size()), MPI_DOUBLE, right, step, MPI_COMM_WORLD);
                std::ifstream in(stem + "-in", std::ios::binary);
                if (!in.read(reinterpret_cast<char *>(sent.data()), bytes))
                    failures++, std::cerr << "rank " << rank << " step " << step << ": ifstream into the sent vector\n";
            } else {
                MPI_Recv(received.data(), static_cast<int>(received.size()), MPI_DOUBLE, left, step, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
                std::ofstream out(stem + "-out", std::ios::binary);
                if (!out.write(reinterpret_cast<const char *>(received.data()), bytes) || (out.close(), !out))
                    failures++, std::cerr << "rank " << rank << " step " << step << ": ofstream of the received\n";
            }
        }
        std::ifstream(stem + "-out", std::ios::binary).read(reinterpret_cast<char *>(back.data()), bytes);
        for (std::size_t i = 0; i < sent.size(); i++) {
            if (back[i] != value(left, step, i) || received[i] != value(left, step, i) ||
                sent[i] != -value(rank, step, i)) {
                failures++;
                std::cerr << "rank " << rank << " step " << step << " element " << i << ": received " << received[i]
                          << ", written " << back[i] << ", sent vector after the read " << sent[i] << "\n";
                break;
            }
        }
    }
    std::remove((stem + "-in").c_str());
    std::remove((stem + "-out").c_str());
    int all_failures = 0;
    MPI_Allreduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        std::cout << "plain_streams: " << size << " processes, 1 MiB vectors through iostreams: "
                  << (all_failures ? "WRONG DATA" : "all values right") << "\n";
    MPI_Finalize();
    return all_failures ? 1 : 0;
}
