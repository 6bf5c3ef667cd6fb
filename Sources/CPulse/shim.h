// PulseAudio's asynchronous client API (libpulse), for the player's sound output.
#include <pulse/pulseaudio.h>
