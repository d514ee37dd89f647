// The declaration of each subcommand (schema.hpp), one function each, in the
// file of its group; commands.cpp lists them.
#pragma once

#include "commands/schema.hpp"

namespace mha::commands {

Command generate_command();    // instance_commands.cpp
Command check_command();
Command import_command();
Command sample_command();      // data_commands.cpp
Command forward_command();
Command stage1_command();      // stage_commands.cpp
Command sculpt_command();
Command study_wsum_command();  // study_command.cpp
Command learn_command();       // learn_command.cpp
Command verify_command();      // verify_command.cpp
Command demo_command();        // demo_command.cpp
Command hard_command();        // hard_command.cpp

}  // namespace mha::commands
