// The test runners' main(): Catch2's, shared by unit_tests and property_tests.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
