// Times ACL's sequential whole-pose decompression of a compressed clip (.acl, written by
// acl_compressor -out=...): every sample of the clip in order, each pose decompressed with
// seek + decompress_tracks into an array of transforms, repeated; prints the median over rounds
// of nanoseconds per pose as `ns_per_pose = N` (bench_compress.py --acl-decompress reads it).
// Rounds are timed in the thread's CPU time (as bench_compress.py times jointmath's side): time
// spent waiting for a core on a shared machine counts on neither side.
//
// Build against an ACL checkout (nfrechette/acl with its external/rtm), outside this repository:
//   g++ -O3 -DNDEBUG -std=c++11 -I ACL/includes -I ACL/external/rtm/includes \
//       benchmarks/acl_decompress.cpp -o acl_decompress
#include <acl/core/ansi_allocator.h>
#include <acl/core/compressed_tracks.h>
#include <acl/core/floating_point_exceptions.h>
#include <acl/decompression/decompress.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

namespace
{
	double thread_seconds()
	{
		timespec now;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
		return double(now.tv_sec) + 1e-9 * double(now.tv_nsec);
	}

	struct pose_writer final : public acl::track_writer
	{
		explicit pose_writer(rtm::qvvf* pose_) : pose(pose_) {}

		void RTM_SIMD_CALL write_rotation(uint32_t track_index, rtm::quatf_arg0 rotation) { pose[track_index].rotation = rotation; }
		void RTM_SIMD_CALL write_translation(uint32_t track_index, rtm::vector4f_arg0 translation) { pose[track_index].translation = translation; }
		void RTM_SIMD_CALL write_scale(uint32_t track_index, rtm::vector4f_arg0 scale) { pose[track_index].scale = scale; }

		rtm::qvvf* pose;
	};
}

int main(int argc, char* argv[])
{
	if (argc != 2)
	{
		std::fprintf(stderr, "usage: acl_decompress CLIP.acl\n");
		return 2;
	}
	std::FILE* file = std::fopen(argv[1], "rb");
	if (file == nullptr)
	{
		std::fprintf(stderr, "cannot open %s\n", argv[1]);
		return 1;
	}
	std::fseek(file, 0, SEEK_END);
	const long size = std::ftell(file);
	std::fseek(file, 0, SEEK_SET);
	void* buffer = nullptr;
	if (size <= 0 || posix_memalign(&buffer, 64, size_t(size)) != 0 || std::fread(buffer, 1, size_t(size), file) != size_t(size))
	{
		std::fprintf(stderr, "cannot read %s\n", argv[1]);
		return 1;
	}
	std::fclose(file);

	acl::error_result error;
	const acl::compressed_tracks* tracks = acl::make_compressed_tracks(buffer, &error);
	if (tracks == nullptr)
	{
		std::fprintf(stderr, "%s is not an ACL compressed clip: %s\n", argv[1], error.c_str());
		return 1;
	}

	acl::scope_disable_fp_exceptions fp_off;
	acl::decompression_context<acl::default_transform_decompression_settings> context;
	if (!context.initialize(*tracks))
	{
		std::fprintf(stderr, "cannot initialize a decompression context for %s\n", argv[1]);
		return 1;
	}

	const uint32_t num_samples = tracks->get_num_samples_per_track();
	const float sample_rate = tracks->get_sample_rate();
	std::vector<rtm::qvvf> pose(tracks->get_num_tracks());
	pose_writer writer(pose.data());

	std::vector<double> rounds;
	const auto begin = std::chrono::steady_clock::now();
	while (rounds.size() < 15 || (rounds.size() < 1000 && std::chrono::steady_clock::now() - begin < std::chrono::milliseconds(500)))
	{
		const double start = thread_seconds();
		for (uint32_t sample_index = 0; sample_index < num_samples; ++sample_index)
		{
			context.seek(float(sample_index) / sample_rate, acl::sample_rounding_policy::none);
			context.decompress_tracks(writer);
		}
		rounds.push_back((thread_seconds() - start) * 1e9 / num_samples);
	}
	std::sort(rounds.begin(), rounds.end());
	float checksum = 0.0F;
	for (const rtm::qvvf& transform : pose)
		checksum += rtm::vector_get_x(transform.translation);
	std::printf("ns_per_pose = %.3f\nnum_tracks = %u\nnum_samples = %u\nchecksum = %g\n", rounds[rounds.size() / 2], tracks->get_num_tracks(), num_samples, double(checksum));
	std::free(buffer);
	return 0;
}
