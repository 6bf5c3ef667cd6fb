#!/usr/bin/env bash
# Makes Tandem's sample clips with the ffmpeg command line (Debian 12's ffmpeg 5.1).
#
# Every video clip carries its frame number twice: as large digits for people, and as a
# machine-readable strip along the top edge (16 blocks of 20x16 pixels, bit i of the frame
# number in block i, least significant bit on the left, white for 1 and black for 0) so that
# tests can tell exactly which frame a player presented.
#
# Usage: Samples/Media/make-media.sh [OUTDIR]
#        Samples/Media/make-media.sh --bench-1080p OUT.mp4 [SECONDS]
#   The second form makes a 1080p H.264 clip for `tandem bench decode` (too large to commit).
set -euo pipefail

font=/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf
[ -f "$font" ] || { echo "needs $font (apt-get install fonts-dejavu-core)" >&2; exit 1; }

# The frame-number strip and the digits, for a WIDTHxHEIGHT video.
numbered() {
  local w=$1 h=$2 rate=$3
  local strip="if(lt(Y,16),if(mod(floor(N/pow(2,floor(X/20))),2),235,16),lum(X,Y))"
  echo "testsrc2=size=${w}x${h}:rate=${rate},format=yuv420p,geq=lum='${strip}':cb='if(lt(Y,8),128,cb(X,Y))':cr='if(lt(Y,8),128,cr(X,Y))',drawtext=fontfile=${font}:text='%{frame_num}':fontsize=$((h / 4)):fontcolor=white:box=1:boxcolor=black@0.6:x=(w-tw)/2:y=(h-th)/2"
}

ff() { ffmpeg -nostdin -hide_banner -loglevel error -y "$@"; }

if [ "${1:-}" = "--bench-1080p" ]; then
  out=${2:?output path}; secs=${3:-20}
  ff -f lavfi -i "testsrc2=size=1920x1080:rate=30" -t "$secs" \
     -c:v libx264 -preset medium -crf 20 -pix_fmt yuv420p "$out"
  exit 0
fi

out=${1:-$(dirname "$0")}
mkdir -p "$out"
secs=4

# H.264 (no B-frames) + AAC in MP4, 25 frames/s: 100 frames.
ff -f lavfi -i "$(numbered 320 240 25)" -f lavfi -i "sine=frequency=440:sample_rate=44100" -t $secs \
   -c:v libx264 -profile:v baseline -g 25 -crf 26 -c:a aac -b:a 48k -ac 2 "$out/h264-aac.mp4"

# H.264 with B-frames (main profile, 3 B-frames) + AAC in MP4, 30 frames/s: 120 frames.
ff -f lavfi -i "$(numbered 320 240 30)" -f lavfi -i "sine=frequency=660:sample_rate=48000" -t $secs \
   -c:v libx264 -profile:v main -bf 3 -g 60 -crf 26 -c:a aac -b:a 48k "$out/h264-bframes.mp4"

# VP9 + Opus in WebM, 24 frames/s: 96 frames.
ff -f lavfi -i "$(numbered 320 240 24)" -f lavfi -i "sine=frequency=330:sample_rate=48000" -t $secs \
   -c:v libvpx-vp9 -b:v 0 -crf 40 -g 48 -deadline good -cpu-used 4 -c:a libopus -b:a 32k "$out/vp9-opus.webm"

# MPEG-4 Part 2 + MP3 in AVI, 25 frames/s: 100 frames. Without -avoid_negative_ts disabled the
# AVI muxer shifts the video to make room for the MP3 encoder's delay, leaving a gap after frame 0.
ff -f lavfi -i "$(numbered 320 240 25)" -f lavfi -i "sine=frequency=550:sample_rate=44100" -t $secs \
   -c:v mpeg4 -q:v 8 -g 25 -c:a libmp3lame -b:a 64k -avoid_negative_ts disabled "$out/mpeg4-mp3.avi"

# A longer clip for watching together (the demo and `tandem bench sync --clip`): H.264 + AAC in
# MP4, 20 s at 30 frames/s, small.
ff -f lavfi -i "$(numbered 320 240 30)" -f lavfi -i "sine=frequency=494:sample_rate=48000" -t 20 \
   -c:v libx264 -profile:v main -g 60 -crf 32 -preset slow -c:a aac -b:a 32k "$out/watch-together.mp4"

# Audio only: AAC in M4A, 3 s.
ff -f lavfi -i "sine=frequency=440:sample_rate=44100" -t 3 -c:a aac -b:a 48k "$out/audio-only.m4a"

ls -l "$out"
