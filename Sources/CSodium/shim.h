// libsodium, for sealing message bodies end to end and proving knowledge of a session's secret.
#ifndef TANDEM_CSODIUM_SHIM_H
#define TANDEM_CSODIUM_SHIM_H
#include <sodium.h>
#endif
