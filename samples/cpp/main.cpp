// Run an IR that uses irgrid's operators from C++, with irgrid's native OpenVINO extension library.
//
//   run_model <libirgrid_openvino.so> <model.xml> [input.raw ...] [-o <output prefix>]
//
// Each input.raw holds one model input's values in its element type and declared shape, in input
// order (without them, every input is filled with zeros). It prints each output's shape and first
// values, and with -o writes output k to <prefix><k>.raw.
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include <openvino/openvino.hpp>

int main(int argc, char** argv) {
    if (argc < 3) {
        std::cerr << "usage: run_model <libirgrid_openvino.so> <model.xml> [input.raw ...] [-o prefix]\n";
        return 2;
    }
    std::vector<std::string> inputs;
    std::string prefix;
    for (int i = 3; i < argc; i++) {
        if (std::string(argv[i]) == "-o" && i + 1 < argc) prefix = argv[++i];
        else inputs.push_back(argv[i]);
    }
    try {
        ov::Core core;
        core.add_extension(argv[1]);  // irgrid's operators, without Python
        auto model = core.read_model(argv[2]);
        auto compiled = core.compile_model(model, "CPU", ov::hint::inference_precision(ov::element::f32));
        auto request = compiled.create_infer_request();
        for (size_t k = 0; k < compiled.inputs().size(); k++) {
            ov::Tensor tensor = request.get_input_tensor(k);
            if (k < inputs.size()) {
                std::ifstream file(inputs[k], std::ios::binary);
                std::vector<char> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
                if (bytes.size() != tensor.get_byte_size()) {
                    std::cerr << inputs[k] << ": " << bytes.size() << " bytes, input " << k << " takes "
                              << tensor.get_byte_size() << "\n";
                    return 2;
                }
                std::copy(bytes.begin(), bytes.end(), static_cast<char*>(tensor.data()));
            } else {
                std::fill_n(static_cast<char*>(tensor.data()), tensor.get_byte_size(), 0);
            }
        }
        request.infer();
        for (size_t k = 0; k < compiled.outputs().size(); k++) {
            ov::Tensor out = request.get_output_tensor(k);
            std::cout << compiled.output(k).get_any_name() << ": " << out.get_element_type() << " " << out.get_shape();
            if (out.get_element_type() == ov::element::f32)
                for (size_t i = 0; i < std::min<size_t>(4, out.get_size()); i++) std::cout << " " << out.data<float>()[i];
            std::cout << "\n";
            if (!prefix.empty()) {
                std::ofstream file(prefix + std::to_string(k) + ".raw", std::ios::binary);
                file.write(static_cast<const char*>(out.data()), out.get_byte_size());
            }
        }
    } catch (const std::exception& error) {
        std::cerr << error.what() << "\n";
        return 1;
    }
    return 0;
}
