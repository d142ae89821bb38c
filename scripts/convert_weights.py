"""Convert your own weight file to cvzoo's .npz (or .safetensors) for a zoo model.

    python scripts/convert_weights.py resnet50.pth resnet50.npz --model resnet50 --source torchvision
    python scripts/convert_weights.py resnet50.pth resnet50.safetensors --model resnet50 --source torchvision
    python scripts/convert_weights.py my_ssd.npz ssd.npz --model ssd300 --source chainercv --n-class 3

The result loads with ``Model(pretrained_model='resnet50.npz')`` or
``cvzoo predict IMG --model resnet50 --pretrained-model resnet50.npz`` (or ``.safetensors``).
"""

from cvzoo.cli import argument_types, entry
from cvzoo.models.weights.convert import convert_weight_file


def main(argv=None):
    parser = entry.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('src', type=argument_types.existing_file,
                        help='the foreign file (.pth, ChainerCV .npz, .weights, .h5)')
    parser.add_argument('dst', type=argument_types.output_file,
                        help='the file to write: a cvzoo .npz, or .safetensors when the name '
                        "ends so (pip install 'cvzoo[safetensors]'); its folder must exist")
    parser.add_argument('--model', required=True, help='registry name, e.g. resnet50')
    parser.add_argument('--source', default=None,
                        help="name mapping: torchvision, chainercv, darknet, cvzoo "
                             "(default: from the file's format)")
    parser.add_argument('--n-class', type=argument_types.positive_int, default=None,
                        help="classes of the file's head when not the model's default")
    args = parser.parse_args(argv)
    model = convert_weight_file(args.model, args.src, args.dst, args.source, args.n_class)
    print(f'wrote {args.dst}: {sum(p.size for p in model.params())} parameters')
    return 0


if __name__ == '__main__':
    entry.run(main)
