"""The options every evaluation script of scripts/ shares, defined once with their types.

``eval_detection.py``, ``eval_imagenet.py``, ``eval_instance_segmentation.py``,
``eval_keypoint_detection.py`` and ``eval_semantic_segmentation.py`` add them with
:func:`add_eval_options` and their own options (the dataset, the metric) beside.
"""

from cvzoo.cli import argument_types


def add_eval_options(parser, *, example_model, batchsize, batchsize_option='--batchsize',
                     pretrained_model=None):
    """Add --model, --pretrained-model, the batch size, --device and --limit.

    Args:
        parser (argparse.ArgumentParser): the script's parser.
        example_model (str): a registry name shown in the help of --model.
        batchsize (int): the default batch size.
        batchsize_option (str): its option's name (the instance and keypoint scripts
            spell it ``--batch-size``).
        pretrained_model (str or None): the default of --pretrained-model; None: required.
    """
    parser.add_argument('--model', required=True, help=f'a zoo name, e.g. {example_model}')
    parser.add_argument('--pretrained-model', required=pretrained_model is None,
                        default=pretrained_model, help='weights key or file')
    parser.add_argument(batchsize_option, type=argument_types.positive_int, default=batchsize,
                        help='images per predict() call')
    parser.add_argument('--device', type=argument_types.device, default='cpu',
                        help="'cpu' or 'cuda:N'")
    parser.add_argument('--limit', type=argument_types.positive_int, default=None,
                        help='only the first N images')
